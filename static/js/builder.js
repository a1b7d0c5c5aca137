// The scenario builder: shows each row's fields for its type and billing (and says which values
// typed for another will not be saved), adds and removes rows of the workloads, options and
// sizing formsets, keeps each sizing sweep's choice of options (those it can size) current, and
// fills an option's offer from the picker. Nothing on the page moves between the press and the
// release of a button (see "later" below).
(function () {
  // What a change shows or hides (a row's fields for its type and billing, a distribution's
  // parameters, the simulation's fields) and an offer list arriving are put on the page after
  // the event that caused them, and never while a mouse button or finger is down: then only
  // after its release and the click it makes. A field's change fires when it loses focus, that
  // is on the press of the button clicked next, and a select whose list is open commits the
  // value typed into it on that press, just before the press reaches the page; done at once,
  // fields appearing above the button would move it away from under the pointer and the click
  // would be lost.
  var queued = [];
  var pressed = false;
  var presses = 0;
  function flush() {
    if (pressed) return;
    var jobs = queued;
    queued = [];
    jobs.forEach(function (job) { job(); });
  }
  function later(job) {
    queued.push(job);
    setTimeout(flush, 0);
  }
  function press() {
    presses += 1;
    pressed = true;
  }
  // After the release (and the click it makes, dispatched with it), unless another press came.
  function release(wait) {
    var which = presses;
    setTimeout(function () {
      if (which !== presses) return;
      pressed = false;
      flush();
    }, wait);
  }
  document.addEventListener("pointerdown", press, true);
  document.addEventListener("mousedown", press, true);
  document.addEventListener("mouseup", function () { release(0); }, true);
  // a finger's release comes before the mouse events of its tap, which press again
  document.addEventListener("pointerup", function (event) {
    release(event.pointerType === "touch" ? 500 : 0);
  }, true);
  document.addEventListener("pointercancel", function () { release(0); }, true);
  document.addEventListener("dragend", function () { release(0); }, true);
  window.addEventListener("blur", function () { release(0); });
  // An offer list (htmx) that arrives during a press is put in place after the release.
  document.addEventListener("htmx:beforeSwap", function (event) {
    var detail = event.detail;
    if (!pressed || !detail.shouldSwap || !window.htmx) return;
    detail.shouldSwap = false;
    var target = detail.target;
    var html = detail.serverResponse;
    later(function () { window.htmx.swap(target, html, { swapStyle: "innerHTML" }); });
  });
  function shown(el, kind, billing) {
    var types = el.dataset.types;
    if (types && types.split(" ").indexOf(kind) < 0) return false;
    var billings = el.dataset.billings;
    if (billings && billings.split(" ").indexOf(billing || "on_demand") < 0) return false;
    return true;
  }
  function refreshRow(row) {
    var type = row.querySelector("select[name$='-type']");
    var billing = row.querySelector("select[name$='-billing']");
    var kind = type ? type.value : "";
    row.querySelectorAll("[data-types], [data-billings]").forEach(function (el) {
      el.hidden = !shown(el, kind, billing ? billing.value : "");
    });
    refreshUnsaved(row);
  }
  // Values typed into fields of another type or billing are kept (switching back shows them
  // again) but not saved: the notice next to the type says which (as the server does).
  function refreshUnsaved(row) {
    var type = row.querySelector("select[name$='-type']");
    var notice = type && document.getElementById(type.id + "-unsaved");
    if (!notice) return;
    var found = [];
    row.querySelectorAll(".field[data-types], .field[data-billings]").forEach(function (el) {
      if (!el.hidden) return;
      el.querySelectorAll("input:not([type=hidden]), select, textarea").forEach(function (input) {
        var value = input.value.trim();
        if (!value) return;
        var label = el.querySelector("label");
        var text = label && label.firstChild ? label.firstChild.textContent.trim() : input.name;
        found.push(text + " = " + value);
      });
    });
    var what = row.dataset.row === "option" ? "type and billing" : "type";
    notice.textContent = found.length
      ? "Not saved with this " + what + ": " + found.join(", ") + ". Switch back to keep " +
        (found.length > 1 ? "them." : "it.")
      : "";
    notice.hidden = !found.length;
  }
  // A sizing sweep's option is one of the names of the options a sweep can size: the choices
  // follow the options as they are added, removed, renamed or change type or billing, and a sweep
  // follows its option's renaming; a name no option has any more, or one of an option that
  // cannot be sized, stays chosen, marked, for the engine to report. Whether an option can be
  // sized is looked up in the server's table (data-sizable: type -> billing -> why not, "" when
  // it can), not decided here.
  function unsizable(table, input) {
    var row = input.closest("fieldset.row");
    var type = row.querySelector("select[name$='-type']");
    var billing = row.querySelector("select[name$='-billing']");
    var byBilling = table[type ? type.value : ""];
    var reason = byBilling && byBilling[billing ? billing.value : ""];
    return typeof reason === "string" ? reason : "unknown type or billing";
  }
  function optionInputs() {
    return Array.prototype.slice.call(document.querySelectorAll(
      "#options-rows > fieldset.row:not([hidden]) input[name$='-name']"));
  }
  function follow(select, inputs) {
    var match = inputs.filter(function (input) { return input.value && input.value === select.value; })[0];
    if (match) select.dataset.follows = match.name;
    else if (!inputs.some(function (input) { return input.name === select.dataset.follows; })) {
      delete select.dataset.follows;
    }
  }
  function refreshSweepOptions() {
    var inputs = optionInputs();
    document.querySelectorAll("#sizing-rows select[data-option-names]").forEach(function (select) {
      var table = JSON.parse(select.dataset.sizable || "{}");
      var names = [];
      var why = {};
      inputs.forEach(function (input) {
        var name = input.value;
        if (!name || names.indexOf(name) >= 0 || why.hasOwnProperty(name)) return;
        var reason = unsizable(table, input);
        if (reason) why[name] = reason;
        else names.push(name);
      });
      var current = select.value;
      var followed = inputs.filter(function (input) { return input.name === select.dataset.follows; })[0];
      if (followed && followed.value) current = followed.value;
      var empty = select.options.length && !select.options[0].value ? select.options[0].text : "(choose)";
      var choices = [["", empty]].concat(names.map(function (name) { return [name, name]; }));
      if (current && why.hasOwnProperty(current)) {
        choices.push([current, current + " (cannot be sized: " + why[current] + ")"]);
      } else if (current && names.indexOf(current) < 0) {
        choices.push([current, current + " (no option of that name)"]);
      }
      select.textContent = "";
      choices.forEach(function (choice) {
        var option = document.createElement("option");
        option.value = choice[0];
        option.textContent = choice[1];
        select.appendChild(option);
      });
      select.value = current;
      follow(select, inputs);
    });
  }
  function refreshDist(group) {
    var select = group.querySelector("select[name$='_dist']");
    group.querySelectorAll("[data-dists]").forEach(function (el) {
      el.hidden = !select.value || el.dataset.dists.split(" ").indexOf(select.value) < 0;
    });
  }
  function refreshSimulation() {
    var box = document.getElementById("id_simulate");
    if (!box) return;
    var section = document.getElementById("simulation-section");
    section.querySelectorAll(".field-grid .field, fieldset.dist").forEach(function (el) {
      if (el.contains(box)) return;
      if (!box.checked) { el.hidden = true; return; }
      el.hidden = false;
    });
    if (box.checked) section.querySelectorAll("fieldset.dist").forEach(refreshDist);
  }
  function renumber(section) {
    var rows = document.querySelectorAll("#" + section + "-rows > fieldset.row:not([hidden])");
    rows.forEach(function (row, i) {
      row.querySelectorAll(".row-number").forEach(function (el) { el.textContent = String(i + 1); });
    });
  }
  function refreshAll(root) {
    root.querySelectorAll("fieldset.row").forEach(refreshRow);
    refreshSimulation();
    refreshSweepOptions();
    ["workloads", "options", "sizing"].forEach(renumber);
  }
  // A catalog picker's long list (GPUs, token prices, quotes, sourced figures) is on the page
  // once, in <template id="list-KEY">: each select of it carries its empty and chosen choices
  // only, and gets the list here, its chosen value kept (one the catalog lacks kept at the end).
  function fillList(select) {
    var list = document.getElementById("list-" + select.dataset.list);
    if (!list || select.dataset.filled) return;
    select.dataset.filled = "";
    var current = select.value;
    var known = {};
    list.content.querySelectorAll("option").forEach(function (option) { known[option.value] = true; });
    var extras = Array.prototype.filter.call(select.options, function (option) {
      return !known[option.value];
    });
    select.textContent = "";
    select.appendChild(list.content.cloneNode(true));
    extras.forEach(function (option) { select.appendChild(option); });
    select.value = current;
    if (select.selectedIndex >= 0) select.options[select.selectedIndex].defaultSelected = true;
  }
  function fillLists(root) {
    root.querySelectorAll("select[data-list]").forEach(fillList);
  }
  // A row of a known type comes with its type's fields only (data-partial): the first change of
  // its type brings the others from the section's empty row, each in its place, numbered as the
  // row is.
  function completeRow(row) {
    if (!row.hasAttribute("data-partial")) return;
    row.removeAttribute("data-partial");
    var section = row.parentElement.id.replace(/-rows$/, "");
    var template = document.getElementById(section + "-empty");
    var type = row.querySelector("select[name$='-type']");
    var prefix = type && /^(.*)-type$/.exec(type.name);
    if (!template || !prefix) return;
    var holder = document.createElement("div");
    holder.innerHTML = template.innerHTML.replace(/__prefix__/g, prefix[1].slice(section.length + 1));
    var grid = row.querySelector(".field-grid");
    var previous = null;
    holder.querySelectorAll(".field-grid > .field").forEach(function (field) {
      var control = field.querySelector("[name]");
      var mine = control && row.querySelector("[name='" + control.name + "']");
      if (mine) { previous = mine.closest(".field"); return; }
      if (previous) previous.after(field);
      else grid.prepend(field);
      previous = field;
      fillLists(field);
    });
  }
  // A workload's growth is given a year (percent) or a month (the document's fraction):
  // static/js/growth.js.
  function refreshGrowth(target, prefix, yearly) {
    window.growthTyped(
      target,
      document.getElementById("id_" + prefix + (yearly ? "monthly_growth" : "growth_per_year")),
      document.getElementById("id_" + prefix + "monthly_growth-converted"),
      yearly,
      1
    );
  }
  document.addEventListener("input", function (event) {
    var target = event.target;
    if (target.closest("#options-rows") && /^options-\d+-name$/.test(target.name)) {
      refreshSweepOptions();
    }
    var growth = /^(workloads-\d+-)(growth_per_year|monthly_growth)$/.exec(target.name || "");
    if (growth) refreshGrowth(target, growth[1], growth[2] === "growth_per_year");
  });
  document.addEventListener("change", function (event) {
    var target = event.target;
    var row = target.closest("fieldset.row");
    if (row && /-(type|billing)$/.test(target.name)) {
      later(function () {
        if (/-type$/.test(target.name)) completeRow(row);
        refreshRow(row);
      });
      // the sweeps' choices follow at once: a select's list, nothing moves
      if (row.closest("#options-rows")) refreshSweepOptions();
    }
    if (target.id === "id_simulate") later(refreshSimulation);
    if (target.matches("select[data-option-names]")) {
      follow(target, optionInputs());
      refreshSweepOptions();  // a marked value left behind leaves the choices
    }
    var dist = target.closest("fieldset.dist");
    if (dist && /_dist$/.test(target.name)) later(function () { refreshDist(dist); });
  });
  document.addEventListener("click", function (event) {
    var add = event.target.closest("[data-add]");
    if (add) {
      var section = add.dataset.add;
      var total = document.getElementById("id_" + section + "-TOTAL_FORMS");
      var index = parseInt(total.value, 10);
      var template = document.getElementById(section + "-empty");
      var holder = document.createElement("div");
      holder.innerHTML = template.innerHTML.replace(/__prefix__/g, String(index));
      var row = holder.firstElementChild;
      fillLists(row);
      document.getElementById(section + "-rows").appendChild(row);
      total.value = String(index + 1);
      if (window.htmx) window.htmx.process(row);
      refreshRow(row);
      refreshSweepOptions();
      renumber(section);
      var first = row.querySelector("select, input:not([type=hidden]), textarea");
      if (first) first.focus();
      return;
    }
    var remove = event.target.closest("[data-remove]");
    if (remove) {
      var removed = remove.closest("fieldset.row");
      var flag = removed.querySelector("input[name$='-DELETE']");
      if (flag) flag.value = "on";
      removed.hidden = true;
      refreshSweepOptions();
      var rows = removed.parentElement;
      renumber(rows.id.replace(/-rows$/, ""));
      var next = rows.parentElement.querySelector("[data-add]");
      if (next) next.focus();
      return;
    }
    var use = event.target.closest(".use-offer");
    if (use) {
      var prefix = use.dataset.prefix;
      ["provider", "instance", "region"].forEach(function (key) {
        var input = document.getElementById("id_" + prefix + "-offer_" + key);
        if (input) input.value = use.dataset[key];
      });
      var standing = document.getElementById(prefix + "-standing");
      if (standing) {
        standing.textContent = "";
        var p = document.createElement("p");
        p.innerHTML = "<strong>Offer chosen</strong>: ";
        p.appendChild(document.createTextNode(use.dataset.summary));
        standing.appendChild(p);
      }
      var offers = document.getElementById(prefix + "-offers");
      if (offers) offers.textContent = "";
      var field = document.getElementById("id_" + prefix + "-offer_provider");
      if (field) field.focus();
    }
  });
  // The script comes after the form: its fields are shown for their types before the page is
  // first drawn whole, not once everything else has loaded.
  fillLists(document);
  refreshAll(document);
})();
