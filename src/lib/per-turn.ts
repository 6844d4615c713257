// What is asked under one key during a turn of the event loop, handed over together once the turn is over.

/**
 * Gathers the items asked under each key until the end of the current turn (`setImmediate`: after the turn has read
 * every request that had arrived), then hands each key's items to `flush`, in the order they were asked. The key
 * lookups of every request (src/storage/accounts/keys.ts, docs/DESIGN.md §77) and PostgreSQL's one-statement reads
 * (src/storage/tx/gathered-reads.ts, §78) are shared this way; whatever `flush` sends is sent after each item was asked.
 */
export function perTurn<T>(flush: (key: string, items: T[]) => void): (key: string, item: T) => void {
  const gathering = new Map<string, T[]>();
  return (key, item) => {
    const items = gathering.get(key);
    if (items !== undefined) {
      items.push(item);
      return;
    }
    const first = [item];
    gathering.set(key, first);
    setImmediate(() => {
      gathering.delete(key);
      flush(key, first);
    });
  };
}
