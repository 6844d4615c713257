// `secinv demo`: its flags are serve's settings, with demo's own defaults (src/config.ts, src/cli/demo.ts).
import { SETTINGS } from '../../config.js';
import { defineCommand, settingFlag } from '../command.js';

const demo = { demo: true };

export default defineCommand('demo', {
  description: 'Create (or reuse) a demo database for two tenants, print a key for each with curl examples, and serve.',
  flags: {
    db: settingFlag(SETTINGS.databaseUrl, demo),
    host: settingFlag(SETTINGS.host, demo),
    port: settingFlag(SETTINGS.port, demo),
  },
  action: async (flags, { io }) => (await import('../demo.js')).demoCommand(flags, io),
});
