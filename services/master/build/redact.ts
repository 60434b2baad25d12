// Secrets out of what a build shows: every secret a build's templates used is replaced by
// `<NAME>` in each log line and state string written after it was used (Buildbot's
// Properties.useSecret and cleanupTextFromSecrets: a value that is blank is not recorded,
// and longer values are replaced first, so a secret that contains another is not half shown).
// Buildbot cleans each piece of output as it arrives, so a secret split across two pieces
// slips through; here whole lines are cleaned (log-writer.ts), so it does not. A line too
// long to keep is cut before it is cleaned (line-splitter.ts), so the cut is first moved back
// to before any secret it would split (safeCut), or the secret's head would be kept whole.
export class Redactor {
  private readonly secrets = new Map<string, string>();
  private order: string[] = [];

  /** A secret was rendered into something the build runs. */
  use(value: string, name: string): void {
    if (!value.trim() || this.secrets.has(value)) return;
    this.secrets.set(value, `<${name}>`);
    this.order = [...this.secrets.keys()].sort((a, b) => b.length - a.length);
  }

  get active(): boolean {
    return this.secrets.size > 0;
  }

  clean(text: string): string {
    let out = text;
    for (const v of this.order) out = out.split(v).join(this.secrets.get(v)!);
    return out;
  }

  /**
   * Where to cut `text`, the head of a longer line, so that no secret is split: the end, or
   * the start of the first secret that reaches the end or crosses the cut (repeated, since
   * moving the cut back can put it inside another secret).
   */
  safeCut(text: string): number {
    let cut = text.length;
    for (let moved = true; moved; ) {
      moved = false;
      for (const v of this.order) {
        const from = Math.max(0, cut - v.length + 1);
        for (let p = from; p < cut; p++) {
          // A secret from p either runs past the end of what we have (its head is all of
          // text from p) or is whole and crosses the cut.
          if (text.charCodeAt(p) !== v.charCodeAt(0)) continue;
          const end = p + v.length;
          const found = end > text.length ? v.startsWith(text.slice(p)) : text.startsWith(v, p);
          if (found) {
            cut = p;
            moved = true;
            break;
          }
        }
      }
    }
    return cut;
  }
}
