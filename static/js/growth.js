// Growth given a year (percent) or a month, as the scenario builder and Ask take it: typing one
// empties the other, which the server works out by one rule (costapp.scenarios.growth,
// (1 + g)^(1/12) − 1), and the note under the rate a month says both. ``monthScale`` turns the
// rate a month as typed into the format's fraction: 1 for the builder's fraction, 0.01 for Ask's
// percent.
(function () {
  "use strict";
  function percentText(value) {
    return String(Number(value.toPrecision(4)));
  }
  window.growthTyped = function (target, other, note, yearly, monthScale) {
    var typed = target.value.trim();
    if (other && typed !== "") other.value = "";
    if (!note) return;
    var number = Number(typed);
    var monthly = yearly ? Math.pow(1 + number / 100, 1 / 12) - 1 : number * monthScale;
    note.textContent = typed === "" || !isFinite(monthly) || monthly <= -1 ? ""
      : "= " + percentText(100 * monthly) + " % a month (" +
        percentText((Math.pow(1 + monthly, 12) - 1) * 100) + " % a year)";
  };
})();
