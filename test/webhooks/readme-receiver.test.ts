// README's receiver example ("Alerts"), run as it is written but for its port: it accepts a delivery signed with its
// secret (204), refuses one signed with another (401), and handles a delivery sent twice under one webhook-id once.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../../src/domain/webhooks.js';
import { sendSigned } from '../../src/webhooks/send.js';
import { freePort } from '../helpers.js';

const checkout = fileURLToPath(new URL('../..', import.meta.url));
const readme = readFileSync(join(checkout, 'README.md'), 'utf8');
const alerts = readme.slice(readme.indexOf('## Alerts'));
const example = /```js\n([\s\S]*?)```/.exec(alerts)![1]!;

const dir = mkdtempSync(join(tmpdir(), 'secinv-readme-receiver-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("README's receiver", () => {
  it('verifies the signature and handles each webhook-id once', async () => {
    expect(example).toContain('.listen(9000)');
    symlinkSync(join(checkout, 'node_modules'), join(dir, 'node_modules'));
    const port = await freePort();
    writeFileSync(join(dir, 'receiver.mjs'), example.replace('.listen(9000)', `.listen(${port}, '127.0.0.1')`));
    const secret = newWebhookSecret();
    const child = spawn(process.execPath, [join(dir, 'receiver.mjs')], {
      env: { ...process.env, SECINV_WEBHOOK_SECRET: secret },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    try {
      const url = `http://127.0.0.1:${port}/`;
      const options = { timeoutMs: 5000, allowPrivate: true };
      const body = Buffer.from(
        JSON.stringify({
          type: 'changes',
          tenantId: 't',
          changes: [{ seq: '7', type: 'finding.opened', vulnerabilityId: 'CVE-2026-1' }],
        }),
      );
      for (let tries = 0; ; tries += 1) {
        const first = await sendSigned(url, secret, 'msg_a', body, options);
        if (first.status !== null || tries > 50) {
          expect(first.status).toBe(204);
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect((await sendSigned(url, secret, 'msg_a', body, options)).status).toBe(204);
      expect((await sendSigned(url, newWebhookSecret(), 'msg_b', body, options)).status).toBe(401);
      expect(out).toBe('7 finding.opened CVE-2026-1\n');
    } finally {
      child.kill();
    }
  });
});
