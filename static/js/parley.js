// Parley's own script: what the pages need beyond htmx and its morph
// extension. No inline script is allowed (Content-Security-Policy), so it
// lives here.

// Live regions are morphed, not replaced, when they refresh: the element
// that has the focus keeps its value (a half-typed reply, an open re-mark
// choice), and every other element keeps its place.
Idiomorph.defaults.ignoreActiveValue = true;

// An element marked data-keep (the outcome of an action, shown where the
// person acted) survives a refresh that no longer contains it.
Idiomorph.defaults.callbacks.beforeNodeRemoved = function (node) {
  return !(node.nodeType === Node.ELEMENT_NODE && node.hasAttribute("data-keep"));
};

// A signed-in page listens to the forum's /live stream (docs/protocol.md §13) and,
// each time the log advances, tells every live region (data-live) to ask
// for itself again; a region unchanged since its version answers 204 and
// stays as it is. EventSource reconnects by itself. (htmx's sse extension
// wires an element's trigger only if the stream was open before htmx
// processed the element, so regions could miss changes until a reconnect.)
(function () {
  const url = document.body && document.body.getAttribute("data-live-url");
  if (!url) {
    return;
  }
  const source = new EventSource(url);
  // While the stream is open the body says so (data-live-open): the server
  // answers only once it listens, so from then on no change is missed.
  source.addEventListener("open", function () {
    document.body.setAttribute("data-live-open", "");
  });
  source.addEventListener("error", function () {
    document.body.removeAttribute("data-live-open");
  });
  // The session ended (signed out in another tab, expired): the stream's
  // last event says so. The page stops listening (EventSource would
  // reconnect) and shows its signed-out state, keeping what is on it.
  source.addEventListener("signed-out", function () {
    source.close();
    document.body.removeAttribute("data-live-open");
    document.body.setAttribute("data-signed-out", "");
    const notice = document.getElementById("signed-out");
    if (notice) {
      const link = notice.querySelector("a[data-signin]");
      if (link) {
        link.href = "/signin?next=" + encodeURIComponent(location.pathname + location.search);
      }
      notice.hidden = false;
    }
  });
  source.addEventListener("changed", function () {
    document.querySelectorAll("[data-live]").forEach(function (region) {
      htmx.trigger(region, "parley:live");
    });
  });
})();

// The reply form says what the chosen act will do before it is sent (the
// server renders it for the default act; this keeps it in step).
document.addEventListener("change", function (event) {
  const select = event.target;
  if (!(select instanceof HTMLSelectElement) || !select.hasAttribute("data-effect-target")) {
    return;
  }
  const effect = document.getElementById(select.getAttribute("data-effect-target"));
  const option = select.selectedOptions[0];
  if (effect && option) {
    effect.textContent = option.getAttribute("data-effect") || "";
  }
});

// Relative times ("5 min ago", rendered by the server) stay true while a
// page is open; the exact time is in the title. The wording follows
// components.Ago.
(function () {
  function ago(then, now) {
    let d = now - then;
    const ahead = d < 0;
    d = Math.abs(d) / 60000;
    let s;
    if (d < 1) return "just now";
    if (d < 60) s = Math.floor(d) + " min";
    else if (d < 1440) s = Math.floor(d / 60) + " h";
    else if (d < 2880 && !ahead) return "yesterday";
    else if (d < 2880) s = "1 day";
    else if (d < 20160) s = Math.floor(d / 1440) + " days";
    else return null; // a date: the server's text stands
    return ahead ? "in " + s : s + " ago";
  }
  setInterval(function () {
    const now = Date.now();
    document.querySelectorAll("time[data-rel]").forEach(function (t) {
      const text = ago(Date.parse(t.getAttribute("datetime")), now);
      if (text && t.textContent !== text) t.textContent = text;
    });
    // A due time ahead ("due in 40 min", components.DueText) counts down;
    // once it passes, the next refresh shows the overdue badge.
    document.querySelectorAll("time[data-due]").forEach(function (t) {
      const text = ago(Date.parse(t.getAttribute("datetime")), now);
      if (text && text.indexOf("in ") === 0 && t.textContent !== "due " + text) t.textContent = "due " + text;
    });
  }, 30000);
})();

// Moderator's console (issue 15, item 4): a proposal card that is acted on
// shrinks to a one-line outcome. Near the end of the page the document
// would shrink with it and the browser would pull the view up, away from
// where the moderator acted; so the page keeps the height it had until the
// moderator leaves it.
document.addEventListener("htmx:beforeSwap", function (event) {
  const target = event.detail.target;
  const main = document.getElementById("main");
  if (!main || !target || !target.closest || !target.closest("#proposal-list")) {
    return;
  }
  const height = main.offsetHeight;
  if (height > (parseFloat(main.style.minHeight) || 0)) {
    main.style.minHeight = height + "px";
  }
});

// Copy buttons (the tokens page's new secret): a button data-copy="ID"
// copies the value of the field with that id, and says so in the element
// data-copy-status="ID". Without the clipboard API (a page served over
// plain HTTP from another host), the text is selected for the person to copy.
document.addEventListener("click", function (event) {
  const button = event.target instanceof Element && event.target.closest("button[data-copy]");
  if (!button) {
    return;
  }
  const id = button.getAttribute("data-copy");
  const field = document.getElementById(id);
  const status = document.querySelector('[data-copy-status="' + id + '"]');
  if (!field) {
    return;
  }
  function say(text) {
    if (status) {
      status.textContent = text;
    }
  }
  function selectIt() {
    field.focus();
    field.select();
    say("Selected: copy it with your device's copy command.");
  }
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(field.value).then(function () {
      say("Copied to the clipboard.");
    }, selectIt);
  } else {
    selectIt();
  }
});

// ---- Thread page (issue 15): folds, replies in place, the message posted.

// A live refresh morphs the tree: a fold the person closed stays closed, and
// the message just posted keeps its highlight.
(function () {
  const before = Idiomorph.defaults.callbacks.beforeAttributeUpdated;
  Idiomorph.defaults.callbacks.beforeAttributeUpdated = function (name, node, mutation) {
    if (name === "open" && node instanceof HTMLDetailsElement) return false;
    if (name === "class" && node.classList && node.classList.contains("just-posted")) return false;
    return before ? before(name, node, mutation) : true;
  };
})();

// True when the element is wholly inside the viewport.
function parleyInView(el) {
  const r = el.getBoundingClientRect();
  return r.top >= 0 && r.bottom <= window.innerHeight;
}

// True when the element begins on screen with its first lines (6 rem) in
// view: enough to see what it is without moving the page.
function parleyBegins(el) {
  const r = el.getBoundingClientRect();
  return r.top >= 0 && r.top + Math.min(r.height, 96) <= window.innerHeight;
}

// The scroll position at which each form in place was opened, by the id
// of the message it replies to.
const parleyReplyOrigins = {};

// A Reply button whose form is already open under its message focuses that
// form instead of fetching a new one (which would lose what is typed).
document.addEventListener("htmx:beforeRequest", function (event) {
  const slot = event.detail.target;
  if (!slot || !slot.classList || !slot.classList.contains("reply-slot")) return;
  const open = slot.querySelector("textarea");
  if (open) {
    event.preventDefault();
    open.focus({ preventScroll: true });
    return;
  }
  // Where the person was when they chose Reply: the page returns there
  // once the reply is posted.
  parleyReplyOrigins[slot.id.replace(/^slot-/, "")] = window.scrollY;
});

// The form opened in place gets the focus without moving the page more
// than it takes to show the text box.
document.addEventListener("htmx:afterSwap", function (event) {
  const slot = event.detail.target;
  if (!slot || !slot.classList || !slot.classList.contains("reply-slot")) return;
  const box = slot.querySelector("textarea");
  if (!box) return;
  box.focus({ preventScroll: true });
  if (!parleyInView(box)) box.scrollIntoView({ block: "nearest" });
});

// Cancel closes a form opened in place.
document.addEventListener("click", function (event) {
  const cancel = event.target instanceof Element && event.target.closest("[data-cancel-reply]");
  if (!cancel) return;
  const form = cancel.closest("form");
  if (form) form.remove();
});

// After a post the server names the new message (HX-Trigger parley:posted);
// once the refreshed tree holds it, it is highlighted, given the focus, and
// shown only if it is not already on screen: the page stays where the
// person was.
(function () {
  let pending = null;
  let origin = null;
  function show() {
    if (!pending) return;
    const message = document.getElementById(pending);
    if (!message) return;
    pending = null;
    if (origin !== null) window.scrollTo(0, origin);
    origin = null;
    document.querySelectorAll(".message.just-posted").forEach(function (m) {
      m.classList.remove("just-posted");
    });
    message.classList.add("just-posted");
    message.setAttribute("tabindex", "-1");
    message.focus({ preventScroll: true });
    // Move only as far as it takes to show its first lines.
    if (!parleyBegins(message)) {
      const r = message.getBoundingClientRect();
      window.scrollBy(0, r.top < 0 ? r.top - 8 : r.top + Math.min(r.height, 96) - window.innerHeight + 8);
    }
  }
  document.addEventListener("parley:posted", function (event) {
    pending = event.detail && event.detail.id;
    const form = event.target instanceof Element && event.target.closest("form[data-inline]");
    const parent = form && form.getAttribute("data-parent");
    origin = parent && parent in parleyReplyOrigins ? parleyReplyOrigins[parent] : null;
    show();
  });
  document.addEventListener("htmx:afterSettle", show);
})();

// ---- Issue 29 item 8: a form control the person changed keeps its value
// through live refreshes until its form is sent, focused or not
// (ignoreActiveValue above covers only the focused one). The control is
// marked data-dirty when changed; a morph leaves a marked control, and
// what is inside it, as it is. Sending the form clears the marks.
(function () {
  function mark(event) {
    const el = event.target;
    if (el instanceof HTMLInputElement || el instanceof HTMLSelectElement || el instanceof HTMLTextAreaElement) {
      if (el.type !== "hidden" && el.type !== "submit") el.setAttribute("data-dirty", "");
    }
  }
  document.addEventListener("input", mark, true);
  document.addEventListener("change", mark, true);
  document.addEventListener("submit", function (event) {
    const form = event.target;
    if (form instanceof HTMLFormElement) {
      form.querySelectorAll("[data-dirty]").forEach(function (el) {
        el.removeAttribute("data-dirty");
      });
    }
  }, true);
  const before = Idiomorph.defaults.callbacks.beforeNodeMorphed;
  Idiomorph.defaults.callbacks.beforeNodeMorphed = function (oldNode, newNode) {
    if (oldNode.nodeType === Node.ELEMENT_NODE && oldNode.hasAttribute("data-dirty")) return false;
    return before ? before(oldNode, newNode) : true;
  };
})();
