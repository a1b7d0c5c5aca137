// Draws every Plotly figure on the page from the JSON beside it; again after an htmx swap.
(function () {
  var CONFIG = { displaylogo: false, responsive: true, showLink: false };
  function draw(root) {
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      if (el.dataset.drawn) return;
      var source = document.getElementById(el.dataset.figure);
      if (!source || !window.Plotly) return;
      var figure = JSON.parse(source.textContent);
      window.Plotly.newPlot(el, figure.data, figure.layout, CONFIG);
      el.dataset.drawn = "1";
    });
  }
  document.addEventListener("DOMContentLoaded", function () { draw(document); });
  document.addEventListener("htmx:afterSettle", function (event) { draw(event.target); });
})();
