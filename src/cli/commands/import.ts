// `secinv import FILE…`: inventory files into the database, all or nothing (src/cli/import.ts).
import { loadConfig } from '../../config.js';
import { boolean, database, defineCommand, files, quiet } from '../command.js';

export default defineCommand('import', {
  description:
    'Load inventory files (JSON bundles or NDJSON, plain or gzip, UTF-8 or UTF-16); "-" reads standard input. ' +
    'All or nothing.',
  arguments: { files: files('files to import') },
  flags: { db: database, dryRun: boolean('--dry-run', 'validate only, write nothing', false), quiet },
  action: async ({ files, ...flags }, { io, hooks }) => {
    const config = loadConfig(flags);
    hooks.bulkWriteStarting?.(config.databaseUrl);
    return (await import('../import.js')).importCommand(config, files, flags, io);
  },
});
