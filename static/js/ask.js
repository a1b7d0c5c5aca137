// The question form of /ask/: the growth a year or a month, each shown converted; once Ask is
// pressed, say that the question is being priced (the page that follows shows its progress), and
// keep a second press from asking it twice.
(function () {
  "use strict";
  var form = document.getElementById("ask-form");
  if (!form) {
    return;
  }
  // The growth is given a year or a month, both in percent (static/js/growth.js).
  form.addEventListener("input", function (event) {
    var target = event.target;
    if (target.name !== "growth_per_year" && target.name !== "growth_per_month") {
      return;
    }
    var yearly = target.name === "growth_per_year";
    window.growthTyped(
      target,
      document.getElementById(yearly ? "id_growth_per_month" : "id_growth_per_year"),
      document.getElementById("id_growth_per_month-converted"),
      yearly,
      0.01
    );
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
