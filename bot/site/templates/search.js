// The static export's search (the served pages search on the server: GET /errors?q=...).
// Reads search.json once; every word must appear in a record's message, crate or file.
(function () {
  var form = document.getElementById("search");
  if (!form) return;
  var root = form.getAttribute("data-root") || "";
  var list = document.getElementById("results");
  var count = document.getElementById("count");
  var index = null;
  function field(name) { return form.elements[name] ? form.elements[name].value : ""; }
  function show(rows) {
    list.textContent = "";
    rows.slice(0, 200).forEach(function (r) {
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = root + "errors/" + r[0] + "/";
      link.textContent = r[5];
      item.appendChild(link);
      var where = document.createElement("code");
      where.textContent = " " + r[1] + " " + (r[4] || "");
      item.appendChild(where);
      list.appendChild(item);
    });
    count.textContent = rows.length + (rows.length === 1 ? " record" : " records") +
      (rows.length > 200 ? ", the first 200 shown." : ".");
  }
  function run(event) {
    if (event) event.preventDefault();
    var words = field("q").toLowerCase().split(/\s+/).filter(Boolean);
    var repo = field("project"), crate = field("crate"), kind = field("kind");
    show(index.filter(function (r) {
      var hay = (r[5] + " " + (r[2] || "") + " " + (r[4] || "")).toLowerCase();
      return (!repo || r[1] === repo) && (!crate || r[2] === crate) &&
        (!kind || r[3] === kind) && words.every(function (w) { return hay.indexOf(w) >= 0; });
    }));
  }
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (index) return run();
    fetch(root + "search.json").then(function (r) { return r.json(); })
      .then(function (data) { index = data; run(); });
  });
})();
