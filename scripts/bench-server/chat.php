<?php
// chat.php: the source article's real-time chat over Server-Sent Events, written again for
// bench-server in the article's style: one PHP CLI process, stream_socket_server and
// stream_select, everything in memory. It is the peer "a PHP user would write" that
// `wasmgap chat` is measured beside.
//
// Usage: php chat.php [port] [page-file]    (listens on 127.0.0.1; port 8000 by default)
//
// Routes and texts are the article's (and `wasmgap chat`'s):
//   GET /                          the page (page-file's bytes, or a small page of its own)
//   GET /<nick>  with "text/event-stream" in the request: log in; events are "data: <text>\n\n":
//                "Welcome <nick>!", "now online: a, b", then the messages kept while offline,
//                "<nick> has joined." / "<nick> has left." to the others (first / last connection)
//   GET /msg/<from>/<to>%20<text>  send to <to> or to "all"; answers "ok\n"
//                to all: "<from> to all: <text>" to every stream
//                to an online user: "<from>: <text>" to the user, "You to <to>: <text>" to <from>
//                to an offline user: kept as "<from> (Y-m-d H:i): <text>" for the next login,
//                "You to <to> (offline): <text>" to <from>
//
// Differences from the article's listing, all of them for a fair benchmark: a request may
// arrive in several reads, HTTP/1.1 keep-alive is honoured (ab without -k still gets one
// request per connection, as in the article), the send route answers "ok" instead of closing
// silently, the listen backlog is 511 instead of 32, a text with a line break is refused (it
// would break the event framing), and the join notice goes out on a user's first connection
// only, as its leave notice does on the last.

error_reporting(E_ALL & ~E_WARNING & ~E_NOTICE);
$port = isset($argv[1]) ? (int)$argv[1] : 8000;
$html = isset($argv[2]) ? file_get_contents($argv[2]) : false;
if ($html === false) {
  $html = "<html><body><form onsubmit=\"var s=new EventSource('/'+this.nick.value);" .
    "s.onmessage=function(e){document.getElementById('c').textContent+=e.data+'\\n'};return false;\">" .
    "<input name='nick' required><input type='submit' value='Choose nickname'></form>" .
    "<form onsubmit=\"var a=new XMLHttpRequest();a.open('GET','/msg/'+encodeURIComponent(document.forms[0].nick.value)+'/'+encodeURIComponent(this.msg.value));a.send();this.msg.value='';return false;\">" .
    "<input name='msg' placeholder='nickname message' required><input type='submit' value='Send message'></form>" .
    "<pre id='c'></pre></body></html>";
}

// A listen backlog of 511, as nginx and Node have (PHP's default is 32: a burst of 100
// connections would wait for SYN retransmits, a second each).
$ctx = stream_context_create(array("socket" => array("backlog" => 511)));
$socket = stream_socket_server("tcp://127.0.0.1:$port", $errno, $err, STREAM_SERVER_BIND | STREAM_SERVER_LISTEN, $ctx);
if (!$socket) { fwrite(STDERR, "chat.php: listen on 127.0.0.1:$port: $err\n"); exit(1); }
echo "chat on http://127.0.0.1:$port/\n";

$conns = array(0 => $socket); // id => stream: the listener, HTTP connections and event streams
$pending = array();           // id => bytes of a request not yet complete (HTTP connections)
$conn_nick = array();         // id => nick (event streams)
$conn_user = array();         // nick => array(id => stream)
$msgs = array();              // nick => events kept while offline
$next_id = 1;

function event($text) { return "data: " . $text . "\n\n"; }

function response($status, $type, $body, $keep) {
  return "HTTP/1.1 " . $status . "\r\nContent-Type: " . $type . "\r\nContent-Length: " . strlen($body) .
    "\r\nConnection: " . ($keep ? "keep-alive" : "close") . "\r\n\r\n" . $body;
}

// write sends $s whole (the streams are blocking, as in the article); false when the peer is gone
function write($conn, $s) {
  while ($s !== "") {
    $n = @fwrite($conn, $s);
    if ($n === false || $n === 0) return false;
    $s = (string)substr($s, $n);
  }
  return true;
}

function close_conn($id) {
  global $conns, $pending;
  @stream_socket_shutdown($conns[$id], STREAM_SHUT_RDWR);
  fclose($conns[$id]);
  unset($conns[$id], $pending[$id]);
}

// to_streams writes one event to the given streams; a stream that cannot take it is dropped
function to_streams($streams, $text) {
  $ev = event($text);
  $gone = array();
  foreach ($streams as $id => $conn) {
    if (!write($conn, $ev)) $gone[] = $id;
  }
  foreach ($gone as $id) leave($id);
}

function all_streams() {
  global $conns, $conn_nick;
  return array_intersect_key($conns, $conn_nick);
}

function leave($id) {
  global $conn_nick, $conn_user;
  if (!isset($conn_nick[$id])) return;
  $user = $conn_nick[$id];
  unset($conn_nick[$id], $conn_user[$user][$id]);
  close_conn($id);
  if (empty($conn_user[$user])) {
    unset($conn_user[$user]);
    to_streams(all_streams(), $user . " has left.");
  }
}

function login($id, $user) {
  global $conns, $pending, $conn_nick, $conn_user, $msgs;
  $conn = $conns[$id];
  unset($pending[$id]);
  $first = !isset($conn_user[$user]);
  $head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
  $online = array_keys($conn_user);
  sort($online);
  $out = $head . event("Welcome " . $user . "!") . event("now online: " . implode(", ", $online));
  // deliver messages sent when the user was offline
  if (isset($msgs[$user])) {
    $out .= $msgs[$user];
    unset($msgs[$user]);
  }
  if (!write($conn, $out)) { close_conn($id); return; }
  // notify the other users
  if ($first) to_streams(all_streams(), $user . " has joined.");
  $conn_nick[$id] = $user;
  $conn_user[$user][$id] = $conn;
}

function send($user, $target, $msg) {
  global $conn_user, $msgs;
  if ($target == "all") {
    to_streams(all_streams(), $user . " to all: " . $msg);
  } else if (isset($conn_user[$target])) {
    if ($target != $user) to_streams($conn_user[$target], $user . ": " . $msg);
    if (isset($conn_user[$user])) to_streams($conn_user[$user], "You to " . $target . ": " . $msg);
  } else {
    // user is offline, keep the message in memory for later delivery
    if (!isset($msgs[$target])) $msgs[$target] = "";
    $msgs[$target] .= event($user . " (" . date("Y-m-d H:i") . "): " . $msg);
    if (isset($conn_user[$user])) to_streams($conn_user[$user], "You to " . $target . " (offline): " . $msg);
  }
}

// handle answers one complete request; false when the connection is to be closed or became a stream
function handle($id, $req) {
  global $conns, $html;
  $line = substr($req, 0, strpos($req, "\r\n"));
  $parts = explode(" ", $line);
  $method = $parts[0];
  $path = isset($parts[1]) ? $parts[1] : "";
  $http11 = isset($parts[2]) && $parts[2] == "HTTP/1.1";
  $lower = strtolower($req);
  $keep = $http11 ? strpos($lower, "\r\nconnection: close") === false : strpos($lower, "\r\nconnection: keep-alive") !== false;
  $conn = $conns[$id];

  if ($method == "GET" && $path == "/") {
    // serve the static page from memory
    $out = response("200 OK", "text/html; charset=utf-8", $html, $keep);
  } else if ($method == "GET" && strpos($path, "/msg/") === 0) {
    // send a message, syntax: GET /msg/user_from/user_to%20message, e.g. GET /msg/john/mary%20hello
    $ok = preg_match("!^/msg/([^/]+)/(\S+)$!", $path, $match);
    $target = $ok ? rawurldecode($match[2]) : "";
    if (!$ok || !strpos($target, " ") || strpbrk($target, "\r\n") !== false) {
      $out = response("400 Bad Request", "text/plain; charset=utf-8", "bad send: expected /msg/<from>/<to>%20<text>, one line\n", $keep);
    } else {
      list($to, $msg) = explode(" ", $target, 2);
      send(rawurldecode($match[1]), $to, $msg);
      $out = response("200 OK", "text/plain; charset=utf-8", "ok\n", $keep);
    }
  } else if ($method == "GET" && strpos($lower, "text/event-stream") !== false && preg_match("!^/([^/\s?]+)$!", $path, $match)) {
    // log in as a new user, syntax: GET /username, e.g. GET /john
    login($id, rawurldecode($match[1]));
    return false;
  } else {
    // block other requests like favicon.ico
    $out = response("404 Not Found", "text/plain; charset=utf-8", "not found\n", $keep);
  }
  if (!isset($conns[$id])) return false; // dropped while sending (it was also a stream)
  if (!write($conn, $out) || !$keep) { close_conn($id); return false; }
  return true;
}

// serve the requests complete in $pending[$id]
function serve($id) {
  global $pending;
  while (isset($pending[$id]) && ($end = strpos($pending[$id], "\r\n\r\n")) !== false) {
    $req = substr($pending[$id], 0, $end + 4);
    $pending[$id] = (string)substr($pending[$id], $end + 4); // GET requests only: no body
    if (!handle($id, $req)) return;
  }
  if (isset($pending[$id]) && strlen($pending[$id]) > 65536) close_conn($id);
}

// server loop
while (true) {
  $reads = $conns;
  $write = null;
  $except = null;
  if (stream_select($reads, $write, $except, 5) === false) break;

  foreach ($reads as $id => $read) {
    if ($id === 0) {
      $conn = @stream_socket_accept($socket, 0);
      if (!$conn) continue;
      $id = $next_id++;
      $conns[$id] = $conn;
      $pending[$id] = "";
      // The request is usually there already: read it now, as the article does, but
      // without blocking the loop when it is not.
      stream_set_blocking($conn, false);
      $data = fread($conn, 8192);
      stream_set_blocking($conn, true);
      if ($data === false) { close_conn($id); continue; }
      $pending[$id] .= $data;
      serve($id);
      continue;
    }
    if (!isset($conns[$id])) continue; // closed earlier in this round
    $data = fread($read, 8192);
    if ($data === "" || $data === false) {
      // user/browser closed the connection
      if (isset($conn_nick[$id])) leave($id); else close_conn($id);
      continue;
    }
    if (isset($pending[$id])) {
      $pending[$id] .= $data;
      serve($id);
    }
    // bytes from an event stream's client are ignored
  }
}
