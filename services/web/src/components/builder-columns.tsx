// The builders a page lays out as columns or rows (the waterfall, the console, the grid): one
// page of them by name, filtered by tag in the API's query, read again when one changes.
import { getPage, type Page } from '../api.js';
import { type Live, useLive } from '../live.js';
import { href } from '../router.js';
import type { Builder } from '../types.js';
import { Pager } from './common.js';

export function useBuilderColumns(
  tag: string,
  page: number,
  size: number,
  field?: readonly string[],
): Live<Page<Builder>> {
  return useLive(
    (s) =>
      getPage<Builder>(
        'builders',
        'builders',
        {
          order: 'name',
          limit: size,
          offset: page * size,
          tags__contains: tag || undefined,
          field,
        },
        s,
      ),
    [page, tag, size],
    ['builders/*/*'],
  );
}

/** The pager of those builders, keeping the tag. */
export function BuilderPager({
  path,
  tag,
  page,
  size,
  total,
}: {
  path: string;
  tag: string;
  page: number;
  size: number;
  total: number;
}) {
  return (
    <Pager
      total={total}
      page={page}
      size={size}
      label="Builders"
      link={(p) => href(path, { tag, page: p || null })}
    />
  );
}
