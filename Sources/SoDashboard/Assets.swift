/// The page's style and its one script, served from the binary (no CDN, no build step): the script keeps a
/// page live (an event stream names each new version; the page's own part is fetched again and swapped in),
/// filters tables, sends the actions' forms and follows logs. It writes text with textContent only; the HTML it
/// swaps in was escaped by the server.
public enum Assets {
    public static let script = #"""
        'use strict';
        (function () {
          const live = document.getElementById('live');
          const state = document.getElementById('live-state');
          const filter = document.getElementById('filter');
          const said = document.getElementById('said');
          function applyFilter() {
            if (!filter) return;
            const q = filter.value.trim().toLowerCase();
            document.querySelectorAll('tr[data-filter]').forEach(function (tr) {
              tr.hidden = q !== '' && tr.dataset.filter.indexOf(q) < 0;
            });
          }
          if (filter) filter.addEventListener('input', applyFilter);
          let fetching = false, again = false;
          async function refresh() {
            if (fetching) { again = true; return; }
            fetching = true;
            try {
              const url = new URL(location.href);
              url.searchParams.set('fragment', '1');
              const r = await fetch(url, { credentials: 'same-origin', headers: { 'Accept': 'text/html' } });
              if (r.ok && live) { live.innerHTML = await r.text(); applyFilter(); }
              if (state) state.textContent = 'live · ' + new Date().toLocaleTimeString();
            } finally {
              fetching = false;
              if (again) { again = false; refresh(); }
            }
          }
          const stream = document.body.dataset.live;
          if (stream && window.EventSource) {
            let seen = null;
            const es = new EventSource(stream);
            es.addEventListener('version', function (e) {
              if (state) state.textContent = 'live';
              state && state.classList.remove('off');
              if (seen !== null && seen !== e.data) refresh();
              seen = e.data;
            });
            es.onerror = function () { if (state) { state.textContent = 'reconnecting…'; state.classList.add('off'); } };
          }
          document.addEventListener('submit', async function (e) {
            const form = e.target;
            if (!(form instanceof HTMLFormElement) || form.getAttribute('action') !== '/actions') return;
            e.preventDefault();
            const button = form.querySelector('button');
            if (button) button.disabled = true;
            if (said) { said.textContent = 'working…'; said.className = 'said'; }
            try {
              const r = await fetch('/actions', {
                method: 'POST', credentials: 'same-origin',
                headers: { 'Accept': 'application/json', 'Content-Type': 'application/x-www-form-urlencoded' },
                body: new URLSearchParams(new FormData(form)).toString()
              });
              const j = await r.json().catch(function () { return { ok: false, message: 'refused (' + r.status + ')' }; });
              if (said) { said.textContent = j.message; said.className = 'said ' + (j.ok ? 'ok' : 'bad'); }
              if (j.ok) { const t = form.querySelector('textarea'); if (t) t.value = ''; refresh(); }
            } finally {
              if (button) button.disabled = false;
            }
          });
          document.querySelectorAll('details.logbox').forEach(function (d) {
            let es = null;
            d.addEventListener('toggle', function () {
              const pre = d.querySelector('pre');
              if (d.open && !es) {
                es = new EventSource(pre.dataset.follow);
                es.addEventListener('line', function (e) {
                  pre.textContent += e.data + '\n';
                  if (pre.textContent.length > 200000) pre.textContent = pre.textContent.slice(-100000);
                  pre.scrollTop = pre.scrollHeight;
                });
              } else if (!d.open && es) { es.close(); es = null; }
            });
          });
        })();
        """#

    public static let style = """
        :root { --fg: #1d2330; --muted: #5b6475; --line: #d9dee7; --bg: #f6f7f9; --ok: #1f7a3e; --busy: #9a6700;
          --bad: #b42318; --accent: #2455c3; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; }
        * { box-sizing: border-box; }
        body { margin: 0; color: var(--fg); background: var(--bg); font-size: 14px; }
        header { display: flex; gap: 1.5rem; align-items: center; padding: .6rem 1.2rem; background: #1d2330; color: #fff; }
        header a { color: #dbe4ff; text-decoration: none; }
        header nav { display: flex; gap: 1rem; flex: 1; }
        header nav a[aria-current] { color: #fff; font-weight: 600; border-bottom: 2px solid #8fb0ff; }
        .brand { font-weight: 700; font-size: 1.1rem; color: #fff; }
        .live-state { font-size: .8rem; color: #9fe3b4; }
        .live-state.off { color: #ffb4a8; }
        .signout button { font-size: .8rem; background: none; color: #dbe4ff; border: 1px solid #5b6475; border-radius: 4px; }
        main { padding: 1rem 1.5rem 3rem; max-width: 1400px; }
        h1 { font-size: 1.4rem; margin: .3rem 0 .6rem; }
        h2 { font-size: 1.05rem; margin: 1.4rem 0 .5rem; }
        h3 { font-size: .95rem; margin: 1rem 0 .4rem; }
        table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
        th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
        th { background: #eef1f6; font-weight: 600; color: var(--muted); }
        tr[hidden] { display: none; }
        a { color: var(--accent); }
        .meta, .empty { color: var(--muted); }
        .cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(180px, 1fr)); gap: .8rem; }
        .cards.small { grid-template-columns: repeat(auto-fit, minmax(120px, 1fr)); }
        .card { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: .7rem .9rem; }
        .card .label { color: var(--muted); font-size: .8rem; text-transform: uppercase; letter-spacing: .04em; }
        .card .value { font-size: 1.5rem; font-weight: 600; }
        .card .sub { color: var(--muted); }
        .badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: .8rem; background: #e7eaf0; }
        .badge.ok { background: #dcf3e4; color: var(--ok); }
        .badge.busy { background: #fff1d1; color: var(--busy); }
        .badge.bad { background: #fde2df; color: var(--bad); }
        .tag { font-size: .7rem; color: var(--muted); border: 1px solid var(--line); border-radius: 4px; padding: 0 .3rem; }
        .text { white-space: pre-wrap; word-break: break-word; }
        pre { background: #11151c; color: #dfe6f0; padding: .7rem; border-radius: 6px; overflow: auto; max-height: 28rem;
          white-space: pre-wrap; word-break: break-word; }
        pre.tasktext { background: #fff; color: var(--fg); border: 1px solid var(--line); }
        .controls { display: flex; gap: .5rem; align-items: center; flex-wrap: wrap; }
        form.action { display: inline; }
        button { font: inherit; padding: .25rem .8rem; border: 1px solid #b9c2d3; border-radius: 5px; background: #fff; cursor: pointer; }
        button.danger { border-color: #e4a9a2; color: var(--bad); }
        form.queue { display: flex; gap: .6rem; align-items: flex-end; margin: .8rem 0; }
        form.queue label { flex: 1; display: flex; flex-direction: column; gap: .2rem; }
        textarea, input[type=search] { font: inherit; padding: .35rem .5rem; border: 1px solid #b9c2d3; border-radius: 5px; }
        input[type=search] { width: 22rem; }
        .said.ok { color: var(--ok); } .said.bad { color: var(--bad); }
        .problem { background: #fde2df; color: var(--bad); padding: .5rem .8rem; border-radius: 6px; }
        .warn { color: var(--busy); }
        ol.timeline { padding-left: 1.2rem; } ol.timeline time { color: var(--muted); font-size: .8rem; margin-right: .4rem; }
        svg.chart { width: 100%; max-width: 760px; background: #fff; border: 1px solid var(--line); border-radius: 6px; }
        svg.chart rect { fill: #4c74d9; } svg.chart text { font-size: 11px; fill: var(--muted); }
        details.logbox { margin: .3rem 0; } details.logbox summary { cursor: pointer; }
        """
}
