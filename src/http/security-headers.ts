// Security headers: helmet's, read from helmet once. @fastify/helmet ran helmet's middlewares on every request (about
// 6% of the CPU of a one-asset answer from kept bytes). With the content security policy left to the routes that serve
// pages (/docs, /console/), what they set depends on nothing in the request, so helmet answers one probe request per
// process and every response then gets the same headers as one object (docs/DESIGN.md §66).
import helmet from '@fastify/helmet';
import Fastify from 'fastify';

const OPTIONS = { contentSecurityPolicy: false, crossOriginEmbedderPolicy: false } as const;

let computed: Promise<Record<string, string>> | undefined;

/**
 * The headers helmet adds to a response: those of a probe answered with it, less those of one answered without. Asked
 * once per process: every app built in it (a test builds dozens) shares the answer.
 */
export const securityHeaders = (): Promise<Record<string, string>> => (computed ??= probedHeaders());

async function probedHeaders(): Promise<Record<string, string>> {
  const answer = async (withHelmet: boolean) => {
    const probe = Fastify();
    if (withHelmet) await probe.register(helmet, OPTIONS);
    probe.get('/', async () => 'probe');
    try {
      return (await probe.inject({ url: '/' })).headers;
    } finally {
      await probe.close();
    }
  };
  const [plain, helmeted] = [await answer(false), await answer(true)];
  const added: Record<string, string> = {};
  for (const [name, value] of Object.entries(helmeted))
    if (name !== 'date' && plain[name] === undefined && value !== undefined) added[name] = String(value);
  return added;
}
