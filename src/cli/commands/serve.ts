// `secinv serve`: every flag is a setting's (src/config.ts), and its help ends with every environment variable.
import { environmentHelp, loadConfig, SETTINGS } from '../../config.js';
import { database, defineCommand, settingFlag } from '../command.js';

export default defineCommand('serve', {
  description: 'Serve the API.',
  flags: {
    db: database,
    host: settingFlag(SETTINGS.host),
    port: settingFlag(SETTINGS.port),
    tlsCert: settingFlag(SETTINGS.tlsCert),
    tlsKey: settingFlag(SETTINGS.tlsKey),
    metricsPort: settingFlag(SETTINGS.metricsPort),
    workers: settingFlag(SETTINGS.workers),
  },
  helpAfter: environmentHelp(),
  action: async (values, { io }) => (await import('../serve.js')).serveCommand(loadConfig(values), io),
});
