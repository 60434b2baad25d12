// Secrets out of what a build shows: every secret a build's templates used is replaced by
// `<NAME>` in what the build stores after it was used (Buildbot's Properties.useSecret and
// cleanupTextFromSecrets: a value that is blank is not recorded). Buildbot cleans each piece
// of output as it arrives, so a secret split across two pieces slips through; here whole
// lines are cleaned (log-writer.ts), so it does not.
//
// Beyond Buildbot, a secret is also looked for in the encodings workers echo commands in,
// and line by line when it has several lines (secret-forms.ts says which and why), and all
// of it in one pass over the text (cover-matches.ts): parts that matches overlap become one
// `<NAME>`, so a secret that contains another, or overlaps it, is not half shown.
//
// Where each kind of text is cleaned: log lines (log-writer.ts's callers), state strings and
// link names and URLs (run-step.ts, transfer.ts), artifact names (transfer.ts), property
// values before they are stored (set-property.ts, git.ts, trigger.ts), the build's state
// (run-build.ts). docs/security.md lists them, and what cannot be caught.
import { CoverMatcher } from './cover-matches.js';
import { lineFragments, wholeForms, wordFragments } from './secret-forms.js';

interface Needles {
  texts: string[];
  names: string[];
}

class Cleaner {
  private matcher: CoverMatcher | null = null;
  private readonly needles: Needles = { texts: [], names: [] };

  add(texts: readonly string[], placeholder: string): void {
    for (const t of texts) {
      this.needles.texts.push(t);
      this.needles.names.push(placeholder);
    }
    this.matcher = null;
  }

  private scan(text: string): ReturnType<CoverMatcher['scan']> {
    this.matcher ??= new CoverMatcher(this.needles.texts);
    return this.matcher.scan(text);
  }

  clean(text: string): string {
    if (this.needles.texts.length === 0) return text;
    const { parts } = this.scan(text);
    if (parts.length === 0) return text;
    let out = '';
    let at = 0;
    for (const p of parts) {
      out += text.slice(at, p.start) + this.needles.names[p.needle];
      at = p.end;
    }
    return out + text.slice(at);
  }

  safeCut(text: string): number {
    if (this.needles.texts.length === 0) return text.length;
    const { parts, open } = this.scan(text);
    // Before what may be the head of a needle the text ends in; then, if that is inside a
    // part, before the part (parts do not overlap, so one move is enough).
    let cut = text.length - open;
    for (const p of parts) if (p.start < cut && cut < p.end) cut = p.start;
    return cut;
  }
}

export class Redactor {
  private readonly used = new Set<string>();
  /** Logs, URLs, property values: the whole secret in each form, and each line of it. */
  private readonly text = new Cleaner();
  /** State strings, link and artifact names: that, and each word of it too. */
  private readonly label = new Cleaner();

  /** A secret was rendered into something the build runs. */
  use(value: string, name: string): void {
    if (!value.trim() || this.used.has(value)) return;
    this.used.add(value);
    const placeholder = `<${name}>`;
    const texts = [...wholeForms(value), ...lineFragments(value)];
    this.text.add(texts, placeholder);
    this.label.add([...texts, ...wordFragments(value)], placeholder);
  }

  get active(): boolean {
    return this.used.size > 0;
  }

  /** A log line, a URL, a property's text. */
  clean(text: string): string {
    return this.text.clean(text);
  }

  /**
   * Where to cut `text`, the head of a line too long to keep whole, so that the cut splits no
   * secret (in any of its forms): the end, or the start of the first one that crosses the
   * cut or that the text ends inside of.
   */
  safeCut(text: string): number {
    return this.text.safeCut(text);
  }

  /** A short text shown as a label: a state string, a link's or an artifact's name. */
  cleanLabel(text: string): string {
    return this.label.clean(text);
  }
}
