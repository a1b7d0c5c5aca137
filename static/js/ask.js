// The question form of /ask/: the growth a year or a month, each shown converted; once Ask is
// pressed, say that the question is being priced (the page that follows shows its progress), and
// keep a second press from asking it twice.
(function () {
  "use strict";
  var form = document.getElementById("ask-form");
  if (!form) {
    return;
  }
  // The growth is given a year or a month (both in percent): typing one empties the other,
  // which the server works out by one rule, (1 + g)^(1/12) − 1, and the note under the rate a
  // month says both, as the scenario builder's does.
  function percentText(value) {
    return String(Number(value.toPrecision(4)));
  }
  form.addEventListener("input", function (event) {
    var target = event.target;
    if (target.name !== "growth_per_year" && target.name !== "growth_per_month") {
      return;
    }
    var yearly = target.name === "growth_per_year";
    var other = document.getElementById(yearly ? "id_growth_per_month" : "id_growth_per_year");
    var typed = target.value.trim();
    if (other && typed !== "") {
      other.value = "";
    }
    var note = document.getElementById("id_growth_per_month-converted");
    if (!note) {
      return;
    }
    var number = Number(typed);
    var monthly = yearly ? Math.pow(1 + number / 100, 1 / 12) - 1 : number / 100;
    note.textContent = typed === "" || !isFinite(monthly) || monthly <= -1 ? ""
      : "= " + percentText(100 * monthly) + " % a month (" +
        percentText((Math.pow(1 + monthly, 12) - 1) * 100) + " % a year)";
  });
  form.addEventListener("submit", function () {
    var button = document.getElementById("ask-button");
    var status = document.getElementById("ask-status");
    if (button) {
      button.disabled = true;
    }
    if (status) {
      status.textContent = "Saving the question and pricing every way to buy it…";
    }
  });
})();
