// Migration 0017_documents_lz4: on PostgreSQL, the stored JSON documents are compressed with lz4 where the server has
// it. A document over ~2 KB is compressed as its row is written, with pglz by default; a risk's (3.4 KB on average)
// took most of the 100-165 µs of each risk a feed load writes, and lz4 compresses and decompresses several times
// faster at about the same size (docs/DESIGN.md §76). Values already stored keep their method until rewritten. A server
// built without lz4 refuses the method; the block then changes nothing, and pglz stays. SQLite does not compress.
// Frozen: the SQL it ran when it was released, per dialect.
import type { FrozenMigration } from './frozen.js';

export const migration: FrozenMigration = {
  sqlite: [],
  postgres: [
    `do $$
    begin
      alter table "risks" alter column "doc" set compression lz4;
      alter table "asset_documents" alter column "doc" set compression lz4;
      alter table "asset_documents" alter column "raw_data" set compression lz4;
      alter table "vulnerability_documents" alter column "doc" set compression lz4;
      alter table "checks" alter column "doc" set compression lz4;
    exception when feature_not_supported then
      raise notice 'this server has no lz4: documents stay compressed with pglz';
    end
    $$`,
  ],
};
