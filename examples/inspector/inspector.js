// The inspector page: renders the deliveries the server streams at <path>/events.
// Every value shown comes from a webhook sender, so it is written with textContent only, never as HTML.
'use strict';

const base = document.currentScript.dataset.path;
const tbody = document.querySelector('#deliveries tbody');
const empty = document.getElementById('empty');
const status = document.getElementById('status');
let limit = 200;

function cell(className, text, title) {
  const td = document.createElement('td');
  td.className = className;
  td.textContent = text;
  if (title) td.title = title;
  return td;
}

function clock(ms) {
  const d = new Date(ms);
  const two = (n) => String(n).padStart(2, '0');
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}.${String(d.getMilliseconds()).padStart(3, '0')}`;
}

function row(delivery) {
  const tr = document.createElement('tr');
  tr.className = 'delivery';
  tr.dataset.seq = String(delivery.seq);
  tr.dataset.outcome = delivery.outcome;
  tr.tabIndex = 0;
  tr.dataset.verified = String(delivery.verified);
  tr.setAttribute('aria-expanded', 'false');

  const outcome = cell('outcome', '');
  const pill = document.createElement('span');
  pill.className = `pill ${delivery.outcome}`;
  pill.textContent = delivery.outcome;
  outcome.append(pill);

  tr.append(
    cell('time', clock(delivery.receivedAt), new Date(delivery.receivedAt).toISOString()),
    cell('webhook', delivery.webhook),
    cell('kind', delivery.kind ?? '—'),
    cell('id', delivery.deliveryId ?? '—', delivery.deliveryId),
    outcome,
    cell('status num', String(delivery.status)),
    cell('code', delivery.code ?? '—'),
    cell('message', delivery.message ?? '—', delivery.message),
    cell('duration num', `${delivery.durationMs.toFixed(1)} ms`),
  );
  tr.addEventListener('click', () => toggle(tr, delivery));
  tr.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      toggle(tr, delivery);
    }
  });
  return tr;
}

function note(className, text) {
  const p = document.createElement('p');
  p.className = className;
  p.textContent = text;
  return p;
}

/** The failing paths of a schema refusal. */
function problemList(problems) {
  const ul = document.createElement('ul');
  ul.className = 'problems';
  for (const problem of problems) {
    const li = document.createElement('li');
    const path = document.createElement('code');
    path.className = 'path';
    path.textContent = problem.path;
    li.append(path, ` ${problem.message}`);
    ul.append(li);
  }
  return ul;
}

/** Opens or closes the details of a delivery (body, failing paths), in a row under it. */
function toggle(tr, delivery) {
  const next = tr.nextElementSibling;
  if (next && next.classList.contains('detail')) {
    next.remove();
    tr.setAttribute('aria-expanded', 'false');
    return;
  }
  const detail = document.createElement('tr');
  detail.className = 'detail';
  const td = document.createElement('td');
  td.colSpan = tr.children.length;
  if (delivery.problems && delivery.problems.length > 0)
    td.append(note('failing', 'Where the body does not match the schema:'), problemList(delivery.problems));
  if (delivery.body !== undefined) {
    td.append(note('verified', 'Verified body:'));
    const pre = document.createElement('pre');
    pre.className = 'body';
    pre.textContent = delivery.body;
    td.append(pre);
    if (delivery.bodyTruncated) td.append(note('nobody', 'The body is longer than the inspector keeps; the rest is cut off.'));
  } else if (delivery.raw !== undefined) {
    const what = delivery.verified ? 'Verified body, not JSON' : 'Unverified body (its signature did not verify: not shown whole)';
    td.append(
      note(delivery.verified ? 'verified' : 'unverified', `${what}: ${delivery.raw.size} bytes. ${delivery.raw.truncated ? 'First bytes' : 'Bytes'}, escaped:`),
    );
    const pre = document.createElement('pre');
    pre.className = 'preview';
    pre.textContent = delivery.raw.preview + (delivery.raw.truncated ? ' …' : '');
    td.append(pre);
  } else {
    td.append(note('nobody', 'No body shown: the request was refused before its body was read or verified.'));
  }
  detail.append(td);
  tr.after(detail);
  tr.setAttribute('aria-expanded', 'true');
}

function trim() {
  const rows = tbody.querySelectorAll('tr.delivery');
  for (let i = limit; i < rows.length; i++) {
    const next = rows[i].nextElementSibling;
    if (next && next.classList.contains('detail')) next.remove();
    rows[i].remove();
  }
}

function showEmpty() {
  empty.hidden = tbody.querySelector('tr.delivery') !== null;
}

function setStatus(state, text) {
  status.dataset.state = state;
  status.textContent = text;
}

const events = new EventSource(`${base}/events`);
events.addEventListener('open', () => setStatus('live', 'live'));
events.addEventListener('error', () => {
  if (events.readyState === EventSource.CLOSED) setStatus('closed', 'disconnected: reload to retry');
  else setStatus('connecting', 'reconnecting…');
});
// Sent first on every (re)connection: the whole list, newest first, replacing what is shown.
events.addEventListener('snapshot', (e) => {
  const snapshot = JSON.parse(e.data);
  limit = snapshot.limit;
  tbody.replaceChildren(...snapshot.deliveries.map(row));
  showEmpty();
});
events.addEventListener('delivery', (e) => {
  const tr = row(JSON.parse(e.data));
  tr.classList.add('new');
  tbody.prepend(tr);
  trim();
  showEmpty();
});
