// An object seen through a Proxy that answers some of its members with the test's own and
// every other one as the object itself would (methods bound to it): how a test puts a fault
// or a counter in front of a pool or a transaction without a stand-in for the rest.
export function intercept<T extends object>(target: T, own: Partial<Record<keyof T, unknown>>): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(own, prop)) return own[prop as keyof T];
      const v = Reflect.get(t, prop, t);
      return typeof v === 'function' ? v.bind(t) : v;
    },
  });
}
