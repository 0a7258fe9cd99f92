// scripts/serve.mjs, the server of `npm start`: `/` goes to the demos, files keep their content types, hidden
// files stay hidden.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from '../../scripts/serve.mjs';

async function withServer(fn) {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${server.address().port}`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

test('the root of the server sends the browser to the demos', async () => {
  await withServer(async (base) => {
    const r = await fetch(`${base}/`, { redirect: 'manual' });
    assert.equal(r.status, 302);
    assert.equal(r.headers.get('location'), '/demos/web/');
    const page = await fetch(`${base}/`);
    assert.equal(page.status, 200);
    assert.match(page.url, /\/demos\/web\/$/);
    assert.match(await page.text(), /<html/i);
  });
});

test('files have their content type and hidden ones are not served', async () => {
  await withServer(async (base) => {
    const js = await fetch(`${base}/web/index.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type'), /text\/javascript/);
    await js.arrayBuffer();
    const hidden = await fetch(`${base}/.git/HEAD`);
    assert.equal(hidden.status, 404);
    await hidden.arrayBuffer();
  });
});
