// The inspector's panel of webhook states: polls <path>/webhooks and draws one row per webhook.
// Every value comes from svc, so it is written with textContent only, never as HTML.
'use strict';

(() => {
  const base = document.currentScript.dataset.path;
  const section = document.getElementById('webhooks');
  const tbody = section.querySelector('tbody');
  const note = section.querySelector('.note');
  const REFRESH_MS = 5000;

  function cell(className, text) {
    const td = document.createElement('td');
    td.className = className;
    td.textContent = text;
    return td;
  }

  function row(webhook) {
    const tr = document.createElement('tr');
    tr.className = 'webhook';
    tr.dataset.state = webhook.state;
    const state = cell('state', '');
    const pill = document.createElement('span');
    pill.className = `pill state-${webhook.state}`;
    pill.textContent = webhook.state;
    state.append(pill);
    tr.append(
      cell('which', webhook.webhook === 'board' ? `board ${webhook.boardId}` : 'bot'),
      state,
      cell('since', webhook.since.replace('T', ' ').replace(/\.\d+Z$/, 'Z')),
      cell('pending num', webhook.pending === undefined ? '—' : String(webhook.pending)),
      cell('summary', webhook.summary),
    );
    return tr;
  }

  async function refresh() {
    try {
      const res = await fetch(`${base}/webhooks`, { cache: 'no-store' });
      if (!res.ok) throw new Error(`answered ${res.status}`);
      const body = await res.json();
      section.hidden = false;
      note.textContent = body.watching ? `Checked with svc every few minutes; the page asks every ${REFRESH_MS / 1000} s.` : body.note;
      tbody.replaceChildren(...body.webhooks.map(row));
    } catch (err) {
      note.textContent = `The webhook states could not be read (${err.message}).`;
    }
  }

  refresh();
  setInterval(refresh, REFRESH_MS);
})();
