// Tests that need root: steps run as another user (WORKER_STEP_USER) only when the agent can
// switch users. On a developer's machine, not root, they are skipped, and say so in the
// test's name and once on the console. CI runs the suite as root (.ci/run sets CI=1), so
// there they are never skipped: a CI that is not root fails them at once, saying why,
// rather than passing by testing less.
import { expect } from 'vitest';

export const IS_ROOT = process.getuid?.() === 0;

/** True where a root-only test is skipped: not root, and not in CI. */
export const SKIP_UNLESS_ROOT = !IS_ROOT && !process.env.CI;

/** The name of a root-only test, saying when it is skipped and why. */
export function asRoot(name: string): string {
  if (!SKIP_UNLESS_ROOT) return name;
  console.warn(`skipped, not root (CI runs it as root): ${name}`);
  return `${name} [skipped: needs root; CI runs it]`;
}

/** The first line of a root-only test: under CI, a run that is not root fails here. */
export function expectRoot(): void {
  expect(IS_ROOT, 'this test needs root to switch users, and CI (CI=1) must run the suite as root').toBe(
    true,
  );
}
