#!/usr/bin/env node
// A small static file server for the repository: the browser demos and the browser test load the package
// (web/index.js, web/dist/bprop.wasm) from it. Plain Node, no dependencies.
//
//   node scripts/serve.mjs [--port N] [--host H] [--root DIR]
//
// Port: --port, else the PORT environment variable, else 8080; 0 picks a free port. Host: 127.0.0.1 unless
// --host says otherwise (0.0.0.0 to reach it from other machines). Root: the repository. Once listening it
// prints one line, `bprop: serving DIR at http://HOST:PORT/`. Files are sent with no caching, so an edited
// file is what the next reload gets. `/` of the repository goes to the demos (/demos/web/); other directories
// serve their index.html, or else a list of their entries; hidden files (names starting with a dot) are never
// served. `--header 'Name: value'` (repeatable) adds a header to every response, e.g. a Content-Security-Policy
// to try an app under it.
import { createReadStream } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Content types by file extension (lower case, with the dot). */
export const MIME_TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.htm': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.cjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.ts': 'text/plain; charset=utf-8',
  '.md': 'text/markdown; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.csv': 'text/csv; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
};

/** The content type for a file name; application/octet-stream when the extension is not known. */
export function mimeType(file) {
  return MIME_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
}

const escapeHtml = (s) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);

function sendText(res, status, text, headers = {}) {
  res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': 'no-store', ...headers });
  res.end(`${text}\n`);
}

/** An http.Server (not yet listening) that serves the files under root. */
export function createServer({ root = repoRoot, home = '/demos/web/', headers = {} } = {}) {
  const base = path.resolve(root);
  return http.createServer(async (req, res) => {
    try {
      for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        sendText(res, 405, 'method not allowed', { Allow: 'GET, HEAD' });
        return;
      }
      let urlPath;
      try {
        urlPath = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
      } catch {
        sendText(res, 400, 'bad request');
        return;
      }
      // Hidden files and folders (.git, .env, ...) are not served.
      if (urlPath.split('/').some((part) => part.startsWith('.'))) {
        sendText(res, 404, `not found: ${urlPath}`);
        return;
      }
      if (urlPath.includes('\0')) {
        sendText(res, 400, 'bad request');
        return;
      }
      if (urlPath === '/' && home) {
        const homeIndex = await stat(path.join(base, home, 'index.html')).catch(() => null);
        if (homeIndex?.isFile()) {
          res.writeHead(302, { Location: home, 'Cache-Control': 'no-store' });
          res.end();
          return;
        }
      }
      let file = path.join(base, path.normalize(urlPath));
      const inside = (p) => p === base || p.startsWith(base + path.sep);
      if (!inside(file)) {
        sendText(res, 403, 'forbidden');
        return;
      }
      let info;
      try {
        info = await stat(file);
      } catch {
        sendText(res, 404, `not found: ${urlPath}`);
        return;
      }
      if (info.isDirectory()) {
        if (!urlPath.endsWith('/')) {
          res.writeHead(301, { Location: `${encodeURI(urlPath)}/`, 'Cache-Control': 'no-store' });
          res.end();
          return;
        }
        const index = path.join(file, 'index.html');
        const indexInfo = await stat(index).catch(() => null);
        if (indexInfo?.isFile()) {
          file = index;
          info = indexInfo;
        } else {
          const entries = (await readdir(file, { withFileTypes: true }))
            .filter((e) => !e.name.startsWith('.'))
            .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
            .sort();
          const title = escapeHtml(urlPath);
          const items = entries.map((n) => `<li><a href="${encodeURI(n)}">${escapeHtml(n)}</a></li>`).join('\n');
          const body = `<!doctype html>\n<meta charset="utf-8">\n<title>${title}</title>\n<h1>${title}</h1>\n<ul>\n${items}\n</ul>\n`;
          res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store' });
          res.end(req.method === 'HEAD' ? undefined : body);
          return;
        }
      }
      if (!info.isFile()) {
        sendText(res, 404, `not found: ${urlPath}`);
        return;
      }
      // A symbolic link may point outside the root: serve only what really lies inside it.
      if (!inside(await realpath(file))) {
        sendText(res, 403, 'forbidden');
        return;
      }
      res.writeHead(200, {
        'Content-Type': mimeType(file),
        'Content-Length': info.size,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      });
      if (req.method === 'HEAD') {
        res.end();
        return;
      }
      const stream = createReadStream(file);
      stream.on('error', () => res.destroy());
      stream.pipe(res);
    } catch (e) {
      if (res.headersSent) res.destroy();
      else sendText(res, 500, `internal error: ${e.message}`);
    }
  });
}

/** Starts serving root on host:port (port 0: a free one); resolves to {server, url, port} once listening. */
export function serve({ root = repoRoot, port = 8080, host = '127.0.0.1', headers = {} } = {}) {
  const server = createServer({ root, headers });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const actual = server.address().port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({ server, port: actual, url: `http://${shownHost}:${actual}/` });
    });
  });
}

function parseArgs(argv) {
  const usage = "usage: node scripts/serve.mjs [--port N] [--host H] [--root DIR] [--header 'Name: value']...   " +
    '(PORT in the environment also sets the port)';
  const opts = { port: process.env.PORT ?? '8080', host: '127.0.0.1', root: repoRoot, headers: {} };
  for (let i = 0; i < argv.length; ++i) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith('--') && arg.includes('=') ? arg.split(/=(.*)/s, 2) : [arg, undefined];
    const value = () => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new Error(`${flag} needs a value\n${usage}`);
      return v;
    };
    if (flag === '--port' || flag === '-p') opts.port = value();
    else if (flag === '--host') opts.host = value();
    else if (flag === '--root') opts.root = path.resolve(value());
    else if (flag === '--header') {
      const m = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+):\s*(.*)$/s.exec(value());
      if (!m) throw new Error(`--header needs 'Name: value'\n${usage}`);
      opts.headers[m[1]] = m[2];
    }
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    } else throw new Error(`unknown argument '${arg}'\n${usage}`);
  }
  const port = Number(opts.port);
  if (!/^\d+$/.test(String(opts.port).trim()) || port > 65535) {
    throw new Error(`the port must be a number from 0 to 65535, got '${opts.port}'`);
  }
  return { ...opts, port };
}

async function main() {
  let opts;
  try {
    opts = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`serve: ${e.message}\n`);
    process.exit(2);
  }
  try {
    const { server, url } = await serve(opts);
    process.stdout.write(`bprop: serving ${opts.root} at ${url}\n`);
    const stop = () => {
      server.close(() => process.exit(0));
      server.closeAllConnections();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  } catch (e) {
    process.stderr.write(`serve: cannot listen on ${opts.host}:${opts.port}: ${e.message}\n`);
    process.exit(1);
  }
}

const invokedDirectly =
  process.argv[1] !== undefined &&
  (await realpath(process.argv[1]).catch(() => '')) === (await realpath(fileURLToPath(import.meta.url)));
if (invokedDirectly) await main();
