/**
 * The console's style and script, inlined in every page (no front-end build step). The script only fetches JSON
 * and server-rendered, escaped HTML fragments; it never builds markup from session data itself.
 */
export const CONSOLE_STYLE = `
:root { --bg:#f7f7f9; --fg:#1d1f24; --muted:#6b7080; --line:#d9dce3; --card:#fff;
  --scheduled:#c7cdd9; --waiting:#f2c14e; --executing:#4a90e2; --success:#3c9d5d; --error:#d64545; --denied:#e07b39; --cancelled:#8d93a1; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; background:var(--bg); color:var(--fg); }
header.top { display:flex; justify-content:space-between; align-items:center; padding:10px 20px; background:#1d2433; color:#fff; }
header.top a { color:#fff; text-decoration:none; font-weight:600; }
.who { color:#c9d1e0; }
main { max-width:1100px; margin:0 auto; padding:16px 20px 60px; }
h1 { font-size:20px; margin:8px 0 12px; } h2 { font-size:16px; margin:22px 0 8px; }
code, pre, kbd { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size:12.5px; }
pre { background:#f0f1f4; border:1px solid var(--line); border-radius:6px; padding:8px 10px; overflow:auto; max-height:420px; white-space:pre-wrap; word-break:break-word; margin:6px 0; }
.count { display:inline-block; min-width:24px; padding:0 7px; border-radius:12px; background:var(--waiting); text-align:center; }
.muted { color:var(--muted); } .empty { color:var(--muted); font-style:italic; } .problem { color:var(--error); }
.request { background:var(--card); border:1px solid var(--line); border-left:4px solid var(--waiting); border-radius:8px; padding:10px 14px; margin:10px 0; outline:none; }
.request:focus-within, .request:focus { box-shadow:0 0 0 2px #4a90e2aa; }
.request header { display:flex; flex-wrap:wrap; gap:8px; align-items:baseline; }
.tool { font-weight:700; font-size:15px; } .meta { color:var(--muted); }
.request p.origin { margin:4px 0 6px; } .origin-label { font-size:14.5px; } .origin time { font-variant-numeric:tabular-nums; }
.reach { color:#14532d; }
.digest code { font-size:11px; word-break:break-all; }
.request p { margin:6px 0; }
pre.command { background:#14181f; color:#e8eaf0; border-color:#14181f; font-size:13.5px; }
pre.command .prompt { color:#7fd88f; }
pre.diff span { display:block; } pre.diff .add { background:#e3f6e7; color:#14532d; } pre.diff .del { background:#fde6e6; color:#7f1d1d; }
pre.diff .hunk { color:#6b5bd2; } pre.diff .file { color:var(--muted); font-weight:600; }
.host { font-size:15px; }
.actions { display:flex; flex-wrap:wrap; gap:8px; align-items:center; margin-top:8px; }
button { font:inherit; padding:5px 12px; border-radius:6px; border:1px solid var(--line); background:#fff; cursor:pointer; }
button:disabled { opacity:.5; cursor:default; }
button.approve { background:var(--success); border-color:var(--success); color:#fff; }
button.always { background:#e8f4ec; border-color:var(--success); color:#14532d; }
button.deny, button.interrupt { background:#fff; border-color:var(--error); color:var(--error); }
button kbd { font-size:11px; opacity:.75; border:1px solid currentColor; border-radius:3px; padding:0 3px; margin-left:4px; }
input.reason { flex:1; min-width:200px; font:inherit; padding:5px 8px; border:1px solid var(--line); border-radius:6px; }
.feedback.ok, .flash.ok { color:var(--success); } .feedback.bad, .flash.bad { color:var(--error); }
#flash { max-width:1100px; margin:0 auto; padding:0 20px; } .flash { margin:6px 0 0; font-weight:600; }
table { border-collapse:collapse; width:100%; background:var(--card); } th, td { text-align:left; padding:5px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
tr.ignored td { color:#8a3b12; }
.badge { display:inline-block; padding:0 7px; border-radius:10px; font-size:12px; color:#fff; }
.status-scheduled { background:var(--scheduled); color:#1d1f24; } .status-validating { background:var(--scheduled); color:#1d1f24; }
.status-awaiting_approval { background:var(--waiting); color:#1d1f24; } .status-executing { background:var(--executing); }
.status-success { background:var(--success); } .status-error { background:var(--error); } .status-denied { background:var(--denied); } .status-cancelled { background:var(--cancelled); }
.timeline { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:8px 12px; }
.lane { display:flex; border-top:1px solid var(--line); padding:6px 0; }
.lane-label { width:110px; flex:none; font-weight:600; font-size:12.5px; }
.track { position:relative; flex:1; background:repeating-linear-gradient(90deg, transparent 0, transparent 9.9%, #eef0f4 10%); }
.track .row { position:absolute; left:0; right:0; height:22px; }
.bar { position:absolute; height:22px; border-radius:4px; white-space:nowrap; }
.bar .label { position:relative; padding:0 6px; font-size:12px; line-height:22px; color:#14181f; font-weight:600; text-shadow:0 0 3px #fff, 0 0 3px #fff; }
.bar .wait { position:absolute; top:0; bottom:0; border-radius:4px; background:repeating-linear-gradient(45deg, #f2c14e 0 6px, #f7d98f 6px 12px); }
.bar .queued { position:absolute; top:0; bottom:0; border-radius:4px 0 0 4px; background:#dfe3ea; }
.legend { margin:8px 0 2px; }
.result { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:6px 12px; margin:8px 0; }
.result p { margin:4px 0; } .budget { color:var(--muted); }
.call-row { background:var(--card); border:1px solid var(--line); border-radius:8px; padding:6px 12px; margin:8px 0; } .call-row p { margin:4px 0; }
.session-label { font-size:14px; font-weight:normal; color:var(--muted); margin-left:8px; }
.chip { display:inline-block; padding:0 6px; border:1px solid var(--line); border-radius:8px; font-size:12px; }
.result-image { display:block; width:96px; height:auto; image-rendering:pixelated; border:1px solid var(--line); margin:4px 0; }
.live-call pre.tail { background:#14181f; color:#e8eaf0; }
nav.turns { margin-bottom:8px; } nav.turns a, nav.turns b { margin-right:6px; }
`;

export const CONSOLE_SCRIPT = `
(() => {
  const meta = (name) => document.querySelector('meta[name="' + name + '"]').content;
  const csrf = meta('csrf-token');
  const liveUrl = meta('live-url');
  const streamUrl = meta('stream-url');
  const flash = document.getElementById('flash');
  const say = (message, kind) => {
    const line = document.createElement('p');
    line.className = 'flash ' + kind;
    line.textContent = message;
    flash.prepend(line);
    while (flash.children.length > 4) flash.lastElementChild.remove();
  };
  const post = async (url, body) => {
    try {
      const response = await fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify(body) });
      const data = await response.json().catch(() => ({ message: response.status + ' ' + response.statusText }));
      return { ok: response.ok, data };
    } catch (error) {
      return { ok: false, data: { message: 'The console did not answer: ' + error.message } };
    }
  };
  const setBusy = (card, busy) => card.querySelectorAll('button').forEach((button) => { button.disabled = busy; });
  const decide = async (card, decision) => {
    if (card.dataset.busy === '1') return;
    card.dataset.busy = '1';
    setBusy(card, true);
    const feedback = card.querySelector('.feedback');
    feedback.className = 'feedback';
    feedback.textContent = 'Sending…';
    const reason = card.querySelector('input.reason').value.trim();
    const body = { sessionId: card.dataset.session, requestId: card.dataset.request, inputDigest: card.dataset.digest, decision };
    if (decision === 'deny' && reason !== '') body.reason = reason;
    const { ok, data } = await post('/api/approval', body);
    const accepted = ok && data.outcome === 'accepted';
    feedback.className = 'feedback ' + (accepted ? 'ok' : 'bad');
    feedback.textContent = data.message;
    say(data.message + ' [' + card.dataset.session + ' · ' + card.dataset.request + ']', accepted ? 'ok' : 'bad');
    if (!accepted) { setBusy(card, false); card.dataset.busy = ''; }
  };
  const interrupt = async (box) => {
    const button = box.querySelector('button.interrupt');
    button.disabled = true;
    const { ok, data } = await post('/api/interrupt', { sessionId: box.dataset.session });
    say(data.message, ok ? 'ok' : 'bad');
  };
  document.addEventListener('click', (event) => {
    const button = event.target.closest && event.target.closest('button');
    if (!button) return;
    const card = button.closest('.request');
    if (card && button.dataset.decision) decide(card, button.dataset.decision);
    else if (button.classList.contains('interrupt')) interrupt(button.closest('.interrupt-box'));
  });
  const currentCard = () => {
    const active = document.activeElement;
    return (active && active.closest && active.closest('.request')) || document.querySelector('.request');
  };
  document.addEventListener('keydown', (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.matches && target.matches('input.reason') && event.key === 'Enter') {
      event.preventDefault();
      decide(target.closest('.request'), 'deny');
      return;
    }
    if (target.matches && target.matches('input, textarea, select')) return;
    const decision = { a: 'allow', A: 'allow_always', d: 'deny' }[event.key];
    const card = decision && currentCard();
    if (!card) return;
    event.preventDefault();
    decide(card, decision);
  });
  const wait = (ms) => {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + ' s';
    const m = Math.floor(s / 60);
    return m < 60 ? m + ' min ' + String(s % 60).padStart(2, '0') + ' s' : Math.floor(m / 60) + ' h ' + String(m % 60).padStart(2, '0') + ' min';
  };
  const tick = () => document.querySelectorAll('.ago[data-since]').forEach((node) => { node.textContent = wait(Date.now() - Date.parse(node.dataset.since)); });
  const shown = new Map();
  const mergeKeyed = (target, markup) => {
    const template = document.createElement('template');
    template.innerHTML = markup;
    const old = new Map([...target.children].map((node) => [node.dataset.key, node]));
    const next = [...template.content.children].map((node) => old.get(node.dataset.key) || node);
    if (next.length === target.children.length && next.every((node, index) => node === target.children[index])) return;
    target.replaceChildren(...next);
  };
  let failing = false;
  const apply = (sections) => {
    for (const [id, markup] of Object.entries(sections)) {
      const target = document.getElementById(id);
      if (!target) continue;
      if (target.hasAttribute('data-keyed')) mergeKeyed(target, markup);
      else if (shown.get(id) !== markup) { target.innerHTML = markup; shown.set(id, markup); }
    }
    tick();
    if (failing) { failing = false; say('Live updates are back.', 'ok'); }
  };
  const broken = (message) => {
    if (!failing) { failing = true; say('Live update failed: ' + message + ' (retrying)', 'bad'); }
  };
  const refresh = async () => {
    try {
      const response = await fetch(liveUrl, { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(response.status + ' ' + response.statusText);
      apply(await response.json());
    } catch (error) {
      broken(error.message);
    }
  };
  document.querySelectorAll('[data-live]').forEach((node) => shown.set(node.id, node.innerHTML));
  // A session page's sections are pushed when they change; a page without a stream (or whose stream the browser gave
  // up on) reads them every 1.5 s.
  let polling;
  const poll = () => { if (polling === undefined) polling = setInterval(refresh, 1500); };
  if (streamUrl !== '' && typeof EventSource === 'function') {
    const stream = new EventSource(streamUrl);
    stream.onmessage = (event) => { try { apply(JSON.parse(event.data)); } catch (error) { broken(error.message); } };
    stream.onerror = () => { if (stream.readyState === EventSource.CLOSED) { broken('the stream closed'); poll(); } };
  } else poll();
  setInterval(tick, 1000);
})();
`;
