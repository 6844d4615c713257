// A webhook receiver for the tests, run as a process of its own: `node receiver-process.js PORT LOG [SETTINGS]`. It
// listens on 127.0.0.1:PORT (0: any), prints `listening PORT`, verifies each delivery's signature with the
// standardwebhooks package as a real receiver would, and appends what it got (one JSON line per request, written on
// arrival) to LOG, a file that outlives the process. Each path /NAME is an endpoint of its own; POST
// /_control/NAME with `{"secret", "answers": [{"status", "delayMs", "location"}], "then": {...}}` sets its secret and
// how it answers (the answers in turn, then `then`; by default 200 at once). SETTINGS, `{"NAME": {...}}`, are those
// the endpoints have from the start: a receiver started again on a port a server is retrying to verifies the first
// delivery it gets.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { Webhook } from 'standardwebhooks';

const [port = '0', log, initial = '{}'] = process.argv.slice(2);
if (log === undefined) throw new Error('usage: receiver-process.js PORT LOG [SETTINGS]');

/** name → { secret, answers, then } */
const endpoints = new Map();
/** An endpoint's settings with `changed` set over them. */
const settingsOf = (name, changed = {}) => ({
  ...(endpoints.get(name) ?? { secret: undefined, answers: [], then: { status: 200 } }),
  ...changed,
});
for (const [name, settings] of Object.entries(JSON.parse(initial))) endpoints.set(name, settingsOf(name, settings));

const read = (request) =>
  new Promise((resolve, reject) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });

const server = createServer(async (request, response) => {
  const body = await read(request);
  const path = new URL(request.url ?? '/', 'http://receiver').pathname;
  if (path.startsWith('/_control/')) {
    const name = path.slice('/_control/'.length);
    endpoints.set(name, settingsOf(name, JSON.parse(body.toString())));
    response.writeHead(204).end();
    return;
  }
  const name = path.slice(1);
  const settings = settingsOf(name);
  const answer = settings.answers.shift() ?? settings.then;
  let verified = false;
  let problem = null;
  let parsed = null;
  try {
    if (settings.secret === undefined) throw new Error('no secret for this endpoint');
    parsed = new Webhook(settings.secret).verify(body, request.headers);
    verified = true;
  } catch (error) {
    problem = error.message;
    try {
      parsed = JSON.parse(body.toString());
    } catch {
      parsed = null;
    }
  }
  const entry = {
    name,
    arrivedAt: Date.now(),
    pid: process.pid,
    id: request.headers['webhook-id'] ?? null,
    timestamp: request.headers['webhook-timestamp'] ?? null,
    contentType: request.headers['content-type'] ?? null,
    verified,
    problem,
    answered: answer.status,
    body: parsed,
  };
  appendFileSync(log, `${JSON.stringify(entry)}\n`);
  const send = () => {
    if (response.destroyed) return;
    response.writeHead(answer.status, answer.location ? { location: answer.location } : {}).end();
  };
  if (answer.delayMs) setTimeout(send, answer.delayMs);
  else send();
});

server.listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
