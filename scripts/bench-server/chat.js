// chat.js: the source article's real-time chat over Server-Sent Events, written for
// bench-server with Node's http module: one process, everything in memory. It is the peer
// "a Node user would write" that `wasmgap chat` is measured beside.
//
// Usage: node chat.js [port] [page-file]    (listens on 127.0.0.1; port 8000 by default)
//
// Routes and texts are the article's (and `wasmgap chat`'s, and chat.php's):
//   GET /                          the page (page-file's bytes, or a small page of its own)
//   GET /<nick>  with Accept: text/event-stream: log in; events are "data: <text>\n\n":
//                "Welcome <nick>!", "now online: a, b", then the messages kept while offline,
//                "<nick> has joined." / "<nick> has left." to the others (first / last connection)
//   GET /msg/<from>/<to>%20<text>  send to <to> or to "all"; answers "ok\n"
//                to all: "<from> to all: <text>" to every stream
//                to an online user: "<from>: <text>" to the user, "You to <to>: <text>" to <from>
//                to an offline user: kept as "<from> (YYYY-MM-DD HH:MM): <text>" for the next
//                login, "You to <to> (offline): <text>" to <from>
'use strict';

const http = require('http');
const fs = require('fs');

const port = Number(process.argv[2] || 8000);
const page = process.argv[3]
  ? fs.readFileSync(process.argv[3])
  : Buffer.from("<html><body><form onsubmit=\"var s=new EventSource('/'+this.nick.value);" +
    "s.onmessage=function(e){document.getElementById('c').textContent+=e.data+'\\n'};return false;\">" +
    "<input name='nick' required><input type='submit' value='Choose nickname'></form>" +
    "<form onsubmit=\"var a=new XMLHttpRequest();a.open('GET','/msg/'+encodeURIComponent(document.forms[0].nick.value)+'/'+encodeURIComponent(this.msg.value));a.send();this.msg.value='';return false;\">" +
    "<input name='msg' placeholder='nickname message' required><input type='submit' value='Send message'></form>" +
    "<pre id='c'></pre></body></html>");

const users = new Map(); // nick => Set of responses (event streams)
const streams = new Set(); // every event stream
const offline = new Map(); // nick => events kept while offline

const event = (text) => 'data: ' + text + '\n\n';

function toStreams(set, text) {
  const ev = event(text);
  for (const res of set) res.write(ev);
}

function stamp(d) {
  const p = (n) => String(n).padStart(2, '0');
  return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + ' ' + p(d.getHours()) + ':' + p(d.getMinutes());
}

function send(from, to, text) {
  if (to === 'all') {
    toStreams(streams, from + ' to all: ' + text);
  } else if (users.has(to)) {
    if (to !== from) toStreams(users.get(to), from + ': ' + text);
    if (users.has(from)) toStreams(users.get(from), 'You to ' + to + ': ' + text);
  } else {
    // the user is offline: keep the message in memory for later delivery
    offline.set(to, (offline.get(to) || '') + event(from + ' (' + stamp(new Date()) + '): ' + text));
    if (users.has(from)) toStreams(users.get(from), 'You to ' + to + ' (offline): ' + text);
  }
}

function login(req, res, nick) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
  let out = event('Welcome ' + nick + '!') + event('now online: ' + [...users.keys()].sort().join(', '));
  if (offline.has(nick)) {
    out += offline.get(nick);
    offline.delete(nick);
  }
  res.write(out);
  const first = !users.has(nick);
  if (first) toStreams(streams, nick + ' has joined.');
  if (first) users.set(nick, new Set());
  users.get(nick).add(res);
  streams.add(res);
  res.on('close', () => {
    streams.delete(res);
    const mine = users.get(nick);
    mine.delete(res);
    if (mine.size === 0) {
      users.delete(nick);
      toStreams(streams, nick + ' has left.');
    }
  });
}

function answer(res, status, type, body) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

const server = http.createServer((req, res) => {
  const path = req.url;
  if (req.method === 'GET' && path === '/') {
    return answer(res, 200, 'text/html; charset=utf-8', page);
  }
  if (req.method === 'GET' && path.startsWith('/msg/')) {
    // send a message, syntax: GET /msg/user_from/user_to%20message, e.g. GET /msg/john/mary%20hello
    const m = /^\/msg\/([^/]+)\/(\S+)$/.exec(path);
    let from = '', target = '';
    try {
      if (m) { from = decodeURIComponent(m[1]); target = decodeURIComponent(m[2]); }
    } catch (e) { target = ''; }
    const space = target.indexOf(' ');
    if (space <= 0 || /[\r\n]/.test(target)) {
      return answer(res, 400, 'text/plain; charset=utf-8', 'bad send: expected /msg/<from>/<to>%20<text>, one line\n');
    }
    send(from, target.slice(0, space), target.slice(space + 1));
    return answer(res, 200, 'text/plain; charset=utf-8', 'ok\n');
  }
  const login_ = /^\/([^/\s?]+)$/.exec(path);
  if (req.method === 'GET' && login_ && (req.headers.accept || '').includes('text/event-stream')) {
    let nick;
    try { nick = decodeURIComponent(login_[1]); } catch (e) { nick = login_[1]; }
    return login(req, res, nick);
  }
  answer(res, 404, 'text/plain; charset=utf-8', 'not found\n');
});

server.listen(port, '127.0.0.1', () => console.log('chat on http://127.0.0.1:' + port + '/'));
