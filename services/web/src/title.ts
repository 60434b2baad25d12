// The tab's title names the page first, then the site (/config's title): someone with a
// builder, a build and a log open in three tabs tells them apart, and the browser's history
// lists pages, not ten "Flotilla"s. document.title is text: nothing here is ever markup.
import { useEffect } from 'preact/hooks';
import { useSession } from './session.js';

export const SITE = 'Flotilla';

/** `<page> · <site>`; the site alone for the home page (an empty `page`). */
export function titleOf(page: string, site: string | undefined): string {
  const s = site || SITE;
  return page ? `${page} · ${s}` : s;
}

export function useTitle(page: string): void {
  const { config } = useSession();
  const text = titleOf(page, config?.title);
  useEffect(() => {
    document.title = text;
  }, [text]);
}
