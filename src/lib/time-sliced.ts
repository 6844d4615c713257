// Work started a slice of time per turn of the event loop, so that a burst of requests cannot hold the loop for all of
// their work before it turns again (and accepts the next connection, and reads the next request). docs/DESIGN.md §116.

/**
 * A gate that starts each piece of work given to it in the order given, in the check phase (`setImmediate`) of the
 * turn it was given in, until the pieces started in that phase have held the loop for `sliceMs`: the rest wait for
 * later turns, so the loop polls for I/O again. The first piece of a phase always starts, so at least one per turn does.
 * Each piece starts in an immediate of its own: what it does until its first wait for I/O (its microtasks) runs
 * before the next one's, and so counts in the slice.
 */
export function timeSliced(sliceMs: number): (start: () => void) => void {
  const waiting: (() => void)[] = [];
  // When the first piece of this check phase started; undefined until one has (reset by the marker of each phase).
  let phaseStart: number | undefined;
  const newPhase = (): void => {
    phaseStart = undefined;
  };
  const tick = (): void => {
    const now = performance.now();
    if (phaseStart === undefined) {
      phaseStart = now;
      // Scheduled from this phase, the marker runs first in the next one: before the ticks put off below.
      setImmediate(newPhase);
    } else if (now - phaseStart >= sliceMs) {
      setImmediate(tick);
      return;
    }
    waiting.shift()?.();
  };
  return (start) => {
    waiting.push(start);
    setImmediate(tick);
  };
}
