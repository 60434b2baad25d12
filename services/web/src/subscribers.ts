// A module-level value (the session, the settings) that components follow: each registers
// a re-render while mounted, and the module calls them all when the value changes.
import { useEffect, useState } from 'preact/hooks';

export function useFollow(listeners: Set<() => void>): void {
  const [, tick] = useState(0);
  useEffect(() => {
    const fn = () => tick((n) => n + 1);
    listeners.add(fn);
    return () => {
      listeners.delete(fn);
    };
  }, [listeners]);
}
