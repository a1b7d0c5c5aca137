// A "Copy" button (data-copy="<input id>") copies that field's text to the clipboard and says so.
(function () {
  function say(id, text) {
    var status = document.querySelector('[data-copied-for="' + id + '"]');
    if (status) status.textContent = text;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) return;
    var id = button.dataset.copy;
    var field = document.getElementById(id);
    if (!field) return;
    field.focus();
    field.select();
    var done = function () { say(id, "Copied."); };
    var manual = function () {
      say(id, document.execCommand && document.execCommand("copy") ? "Copied." : "Select the key and copy it (Ctrl+C).");
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(field.value).then(done, manual);
    } else {
      manual();
    }
  });
  document.addEventListener("focusin", function (event) {
    if (event.target.matches && event.target.matches("input[readonly]")) event.target.select();
  });
})();
