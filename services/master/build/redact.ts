// Secrets out of what a build shows: every secret a build's templates used is replaced by
// `<NAME>` in each log line and state string written after it was used (Buildbot's
// Properties.useSecret and cleanupTextFromSecrets: a value that is blank is not recorded,
// and longer values are replaced first, so a secret that contains another is not half shown).
// Buildbot cleans each piece of output as it arrives, so a secret split across two pieces
// slips through; here whole lines are cleaned (log-writer.ts), so it does not.
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
}
