// Node's fetch (undici) in the capture (issue #24 condition 4): what a Node program sends to the recorder at $BASE.
const base = process.env.BASE;

async function send(url, init) {
  const response = await fetch(url, init);
  await response.arrayBuffer();
}

await send(`${base}/items?q=${encodeURIComponent('café & co')}&page=2`);
await send(`${base}/items/7`, { method: 'HEAD' });
await send(`${base}/items`, {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ name: 'Zoë', count: 2 }),
});
await send(`${base}/login`, { method: 'POST', body: new URLSearchParams({ user: 'zoë', password: 'p@ss word' }) });
const form = new FormData();
form.append('note', 'hello');
form.append('file', new Blob(['line one\nline two\n'], { type: 'text/plain' }), 'notes.txt');
await send(`${base}/upload`, { method: 'POST', body: form });
// A stream body: fetch sends it chunked, and needs duplex: 'half'.
const encoder = new TextEncoder();
const stream = new ReadableStream({
  start(controller) {
    controller.enqueue(encoder.encode('{"part": 1}\n'));
    controller.enqueue(encoder.encode('{"part": 2}\n'));
    controller.close();
  },
});
await send(`${base}/stream`, { method: 'POST', body: stream, duplex: 'half' });
