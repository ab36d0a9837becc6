/** The trivial handler every stack runs once per accepted delivery. */
let handled = 0;

export function trivialHandler(): void {
  handled++;
}

export function handledCount(): number {
  return handled;
}
