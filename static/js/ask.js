// The question form of /ask/: once Ask is pressed, say that the question is being priced (the
// page that follows shows its progress), and keep a second press from asking it twice.
(function () {
  "use strict";
  var form = document.getElementById("ask-form");
  if (!form) {
    return;
  }
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
