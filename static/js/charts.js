// Draws every Plotly figure on the page from the JSON beside it; again after an htmx swap.
//
// Each figure is fitted to the width it is drawn at, so no text overlaps another or leaves the
// chart: titles, axis titles, panel titles, legend names and category labels are wrapped at
// spaces to the width they have; the legend sits at the bottom of the chart, below the axes'
// titles, and the chart grows by the legend's height so the plot keeps its own; marker labels
// are never cut at an axis. A window resized by more than a few pixels fits them again.
// A figure names its template ("plotly_white"); the page holds each template once, in the JSON
// of #plotly-templates, put back into the figure before it is drawn.
(function () {
  // not plotly's own "responsive": a resized window draws the figure again, fitted (below)
  var CONFIG = { displaylogo: false, responsive: false, showLink: false };
  var CHAR_PX = 7.2; // an average character of Plotly's 12 px font
  var TITLE_PX = 10; // of a 17 px title
  var GAP = 8;
  var TITLE_TOP = 24; // px from the chart's top to its title's first line
  var LEGEND_LINE = 16, LEGEND_GAP = 10; // a legend item's line, and the room between two
  var LEGEND_CHAR_PX = 6.4; // an average character of a legend's 12 px name
  var TOOLBAR_ROW = 26; // the toolbar's row above a phone's chart title
  var SLACK = 24; // a plot this much shorter than planned is not drawn again for it
  var TICK_LINE = 14, TICK_CHAR_PX = 6.2; // a tick label's line, its average character

  function wrap(text, width) {
    if (typeof text !== "string" || width < 8) return text;
    return text.split("<br>").map(function (line) {
      var out = [], current = "";
      line.split(" ").forEach(function (word) {
        if (current && (current + " " + word).length > width) {
          out.push(current);
          current = word;
        } else {
          current = current ? current + " " + word : word;
        }
      });
      if (current) out.push(current);
      return out.join("<br>");
    }).join("<br>");
  }

  function cut(text, most) {
    var parts = text.split("<br>");
    if (parts.length <= most) return text;
    return parts.slice(0, most).join("<br>") + "…";
  }

  function titled(holder, width) {
    if (!holder || holder.title == null) return;
    if (typeof holder.title === "string") holder.title = { text: holder.title };
    if (holder.title.text) holder.title.text = wrap(holder.title.text, width);
  }

  function named(values) {
    return Array.isArray(values) && values.every(function (v) { return typeof v === "string"; });
  }

  // Labels cut short that read the same (two options "H100 SXM5 80GB on…") each said instead
  // from the word where its name parts from the others it shares the label with, two words
  // before it kept for context ("…as needed (Lambda)"), none where those still read alike.
  function distinct(names, labels, label) {
    var same = {};
    labels.forEach(function (text, i) { (same[text] = same[text] || []).push(i); });
    function told(context) {
      return labels.map(function (text, i) {
        var group = same[text];
        if (group.length < 2) return text;
        var words = names[i].split(" "), shared = 0;
        group.forEach(function (j) {
          if (j === i) return;
          var other = names[j].split(" "), k = 0;
          while (k < words.length && k < other.length && words[k] === other[k]) k++;
          shared = Math.max(shared, k);
        });
        var from = Math.max(0, Math.min(shared, words.length - 1) - context);
        return from === 0 ? text : label("…" + words.slice(from).join(" "));
      });
    }
    function alike(found) {
      return found.some(function (text, i) { return found.indexOf(text) !== i; });
    }
    var found = told(2);
    return alike(found) ? told(0) : found;
  }

  // A category axis of a trace (its "x2", "y3" … or the first) labelled by ``label(name)``.
  function categoryTicks(layout, kind, ref, names, label) {
    var axis = kind + (ref ? ref.slice(1) : "");
    var holder = layout[axis] || (layout[axis] = {});
    holder.tickmode = "array";
    holder.tickvals = names;
    holder.ticktext = distinct(names, names.map(label), label);
    return holder;
  }

  function templated(layout) {
    if (typeof layout.template !== "string") return;
    var all = document.getElementById("plotly-templates");
    var found = all ? JSON.parse(all.textContent)[layout.template] : null;
    if (found) layout.template = found; else delete layout.template;
  }

  function fitted(source, width) {
    var figure = JSON.parse(source);
    var layout = figure.layout || (figure.layout = {});
    templated(layout);
    var margin = layout.margin || (layout.margin = {});
    if (width < 600) {
      margin.l = Math.min(margin.l == null ? 80 : margin.l, 64);
      margin.r = Math.min(margin.r == null ? 80 : margin.r, 12);
    }
    var left = margin.l == null ? 80 : margin.l, right = margin.r == null ? 80 : margin.r;
    // long category names beside horizontal bars: wrapped (3 lines at most, the rest cut)
    // in at most two fifths of the width, the left margin made as wide as they need
    (figure.data || []).forEach(function (trace) {
      if (trace.type !== "bar" || trace.orientation !== "h" || !named(trace.y)) return;
      var chars = Math.max(12, Math.min(40, Math.floor(width * 0.4 / CHAR_PX)));
      var holder = categoryTicks(layout, "yaxis", trace.yaxis, trace.y, function (y) {
        return cut(wrap(y, chars), 3);
      });
      var longest = 0;
      holder.ticktext.forEach(function (t) {
        t.split("<br>").forEach(function (line) { longest = Math.max(longest, line.length); });
      });
      left = Math.max(left, Math.ceil(longest * CHAR_PX) + 16);
      margin.l = left;
    });
    var plotChars = Math.floor((width - left - right) / CHAR_PX);
    var height = layout.height || 450;
    titled(layout, Math.floor((width - 20) / TITLE_PX));
    if (layout.title && layout.title.text) {
      // at the top of the chart, its lines downwards, the plot below them
      layout.title.yref = "container";
      layout.title.yanchor = "top";
      layout.title.automargin = false;
      margin.t = Math.max(margin.t == null ? 100 : margin.t, lines(layout.title.text) * 23 + 44);
    }
    var panels = Object.keys(layout).filter(function (k) { return /^yaxis\d*$/.test(k); }).length;
    Object.keys(layout).forEach(function (key) {
      // the margins make room for every tick label; Plotly's default, "hide past div", would
      // measure every label again for each label drawn (most of a page's drawing time)
      if (/^[xy]axis\d*$/.test(key) && layout[key].ticklabeloverflow == null) {
        layout[key].ticklabeloverflow = "allow";
      }
      if (/^xaxis\d*$/.test(key)) {
        titled(layout[key], plotChars);
        layout[key].automargin = true;
      } else if (/^yaxis\d*$/.test(key)) {
        titled(layout[key], Math.floor((height / Math.max(panels, 1) - 60) / CHAR_PX));
        layout[key].automargin = true;
      }
    });
    var noteChars = Math.floor((width - left - right) / 9); // panel titles: 16 px
    (layout.annotations || []).forEach(function (note) {
      if (note.text) note.text = wrap(note.text, note.font && note.font.size < 14 ? plotChars : noteChars);
    });
    var legendChars = Math.max(16, Math.min(60, Math.floor((width - 60) / CHAR_PX)));
    var tickExtra = 0;
    (figure.data || []).forEach(function (trace) {
      if (trace.name) trace.name = wrap(trace.name, legendChars);
      if (typeof trace.mode === "string" && trace.mode.indexOf("text") >= 0 && trace.cliponaxis == null) {
        trace.cliponaxis = false;
      }
      if (trace.type === "bar" && named(trace.x)) {
        // long category names: wrapped under their bars (3 lines at most, the rest cut, the
        // whole name in the tooltip and the table), turned upright where the bars are narrow
        var per = Math.floor(plotChars / Math.max(trace.x.length, 1)) - 1;
        var upright = per < 14;
        // upright, as many lines as the bar's room holds side by side
        var most = upright ? Math.max(1, Math.min(3, Math.floor((plotChars * CHAR_PX / Math.max(trace.x.length, 1)) / 16))) : 3;
        var ticks = categoryTicks(layout, "xaxis", trace.xaxis, trace.x, function (x) {
          return cut(wrap(x, upright ? 24 : per), most);
        });
        ticks.tickangle = upright ? -90 : 0;
        // the room the labels take below the plot, beyond one line of text
        var longest = 0, mostLines = 1;
        ticks.ticktext.forEach(function (t) {
          mostLines = Math.max(mostLines, lines(t));
          t.split("<br>").forEach(function (line) { longest = Math.max(longest, line.length); });
        });
        tickExtra = Math.max(tickExtra, upright ? longest * TICK_CHAR_PX - TICK_LINE : (mostLines - 1) * TICK_LINE);
      }
    });
    var stacked = stack(layout, width);
    if (stacked) figure.plotHeight = stacked;
    var legend = layout.legend || (layout.legend = {});
    if (legend.orientation === "h" || width < 600) {
      legend.orientation = "h";
      legend.xref = "container"; legend.x = 0; legend.xanchor = "left";
      legend.yref = "container"; legend.y = 0; legend.yanchor = "bottom";
    }
    layout.height = layout.height || height;
    layout.width = width;
    layout.autosize = false;
    // on a phone the toolbar has a row of its own above the title
    figure.titleTop = width < 600 ? TITLE_TOP + TOOLBAR_ROW : TITLE_TOP;
    if (width < 600 && layout.title && layout.title.text) {
      margin.t = (margin.t == null ? 100 : margin.t) + TOOLBAR_ROW;
      layout.height += TOOLBAR_ROW;
    }
    if (figure.plotHeight == null) {
      var mt = margin.t == null ? 100 : margin.t, mb = margin.b == null ? 80 : margin.b;
      figure.plotHeight = Math.max(220, Math.min(layout.height - mt - mb, 340));
    }
    // the chart made as much taller as its legend at the bottom needs (one item a row on a
    // phone, rows of items side by side wider), so the plot keeps its height and drawing it
    // once mostly does; the whole legend shown, none of it scrolled out of sight
    var legendH = legendHeight(figure, width);
    if (legendH > 0 && legend.yref === "container") {
      if (legend.maxheight == null) legend.maxheight = legendH + 4 * LEGEND_GAP;
      layout.height += legendH;
    }
    layout.height += Math.ceil(tickExtra);
    if (layout.title && layout.title.text) layout.title.y = 1 - figure.titleTop / layout.height;
    return figure;
  }

  // How tall a figure's legend will be [px], estimated from its items' names.
  function legendHeight(figure, width) {
    var layout = figure.layout;
    var items = (figure.data || []).filter(function (trace) {
      return trace.showlegend !== false && trace.name && trace.visible !== false;
    });
    if (layout.showlegend === false || !items.length) return 0;
    if (items.length < 2 && layout.showlegend !== true) return 0;
    if (width < 600) {
      return items.reduce(function (sum, trace) {
        return sum + lines(trace.name) * LEGEND_LINE + LEGEND_GAP;
      }, 0);
    }
    var room = width - 40, x = 0, rowLines = 1, total = 0;
    items.forEach(function (trace) {
      var longest = 0;
      trace.name.split("<br>").forEach(function (line) { longest = Math.max(longest, line.length); });
      var w = 50 + longest * LEGEND_CHAR_PX;
      if (x > 0 && x + w > room) {
        total += rowLines * LEGEND_LINE + LEGEND_GAP;
        x = 0;
        rowLines = 1;
      }
      x += w;
      rowLines = Math.max(rowLines, lines(trace.name));
    });
    return total + rowLines * LEGEND_LINE + LEGEND_GAP;
  }

  function lines(text) {
    return typeof text === "string" && text ? text.split("<br>").length : 0;
  }

  function axisTitle(axis) {
    return axis && axis.title ? axis.title.text : "";
  }

  // Panels stacked in one column (make_subplots' titles as annotations): laid out in pixels,
  // each with room above for its title's lines and below for its ticks and axis title's lines,
  // so a panel's axis title never meets the next panel's title.
  function stack(layout, width) {
    var ykeys = Object.keys(layout).filter(function (k) { return /^yaxis\d*$/.test(k); })
      .sort(function (a, b) { return Number(a.slice(5) || 1) - Number(b.slice(5) || 1); });
    var notes = layout.annotations || [];
    if (ykeys.length < 2 || notes.length < ykeys.length) return;
    var plotH = width < 600 ? 220 : 240, lineH = 17;
    var parts = ykeys.map(function (key, i) {
      var xkey = "xaxis" + key.slice(5);
      return {
        x: xkey,
        y: key,
        above: lines(notes[i].text) * 21 + 10,
        below: 34 + lines(axisTitle(layout[xkey])) * lineH + 24,
      };
    });
    var total = parts.reduce(function (sum, p) { return sum + p.above + plotH + p.below; }, 0);
    var cursor = total;
    parts.forEach(function (p, i) {
      cursor -= p.above;
      var top = cursor / total;
      cursor -= plotH;
      var bottom = cursor / total;
      cursor -= p.below;
      layout[p.y].domain = [bottom, top];
      layout[p.y].automargin = true;
      layout[p.x] = layout[p.x] || {};
      layout[p.x].automargin = i === parts.length - 1;
      notes[i].y = top;
      notes[i].yanchor = "bottom";
    });
    var margin = layout.margin;
    layout.height = total + (margin.t == null ? 100 : margin.t) + 40;
    margin.b = 40;
    return total;
  }

  function boxes(el, selector) {
    return Array.prototype.map.call(el.querySelectorAll(selector), function (n) { return n.getBoundingClientRect(); })
      .filter(function (r) { return r.width > 0 && r.height > 0; });
  }

  // After the first drawing: the plot's own height back where the margins took it (long tick
  // labels, a legend of many lines), and room for the legend below the lowest axis text.
  function settle(el, figure) {
    var layout = figure.layout;
    var size = el._fullLayout && el._fullLayout._size;
    if (!size) return null;
    var grow = Math.max(0, Math.ceil(figure.plotHeight - size.h));
    var lower = 0;
    var legend = el.querySelector(".legend");
    if (legend && layout.legend && layout.legend.yref === "container") {
      var top = legend.getBoundingClientRect().top;
      var lowest = null;
      boxes(el, ".xtick text, [class^='g-x'][class$='title'] text").forEach(function (r) {
        if (lowest === null || r.bottom > lowest) lowest = r.bottom;
      });
      if (lowest !== null) lower = Math.max(0, Math.ceil(lowest + GAP - top));
    }
    // the toolbar (shown on hover, or a tap on a phone) over the title: the title moved below it
    var drop = 0;
    var bar = el.querySelector(".modebar");
    var title = el.querySelector(".gtitle");
    if (bar && title) {
      var b = bar.getBoundingClientRect(), t = title.getBoundingClientRect();
      if (b.width > 0 && t.width > 0 && b.left < t.right && t.left < b.right && b.top < t.bottom && t.top < b.bottom) {
        drop = Math.ceil(b.bottom - t.top + 4);
      }
    }
    if (grow <= SLACK && lower <= 0 && drop <= 0) return null;
    grow = Math.min(grow + lower, 1200) + drop;
    layout.height += grow;
    var update = { height: layout.height };
    if (drop > 0) {
      figure.titleTop += drop;
      layout.margin.t = size.t + drop;
      update["margin.t"] = layout.margin.t;
    }
    if (layout.title && layout.title.text) {
      update["title.y"] = layout.title.y = 1 - figure.titleTop / layout.height;
    }
    if (lower > 0) {
      layout.margin.b = size.b + lower;
      update["margin.b"] = layout.margin.b;
    }
    return window.Plotly.relayout(el, update);
  }

  function render(el) {
    var source = document.getElementById(el.dataset.figure);
    if (!source || !window.Plotly) return;
    var width = el.clientWidth || el.parentElement.clientWidth || 600;
    var figure = fitted(source.textContent, width);
    el.dataset.fittedWidth = String(width);
    delete el.dataset.settled;
    if (el.dataset.drawn) window.Plotly.purge(el); // drawn anew: its margins measured afresh
    // data-settled: drawn and fitted (what the layout tests wait for)
    var done = function () { el.dataset.settled = "1"; };
    try {
      Promise.resolve(window.Plotly.newPlot(el, figure.data, figure.layout, CONFIG)).then(function () {
        return settle(el, figure);
      }).then(done, function (error) { done(); console.error(error); });
    } catch (error) {
      done();
      console.error(error);
    }
    el.dataset.drawn = "1";
  }

  function draw(root) {
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      if (!el.dataset.drawn) render(el);
    });
  }

  var pending = null;
  window.addEventListener("resize", function () {
    clearTimeout(pending);
    pending = setTimeout(function () {
      document.querySelectorAll("[data-figure][data-drawn]").forEach(function (el) {
        if (Math.abs(el.clientWidth - Number(el.dataset.fittedWidth || 0)) > 4) render(el);
      });
    }, 150);
  });
  document.addEventListener("DOMContentLoaded", function () { draw(document); });
  document.addEventListener("htmx:afterSettle", function (event) { draw(event.target); });
})();
