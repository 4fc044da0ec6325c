/**
 * The page's own address, as the address bar shows it (path, query, hash): the serve link's code is taken out
 * of it, the shown Thread put in. Both go through here, so neither drops the other's parameters.
 */

/** `href` as path + query + hash, with the query parameter `name` set to `value`, or removed for null. */
export function addressWith(href: string, name: string, value: string | null): string {
  const url = new URL(href);
  if (value === null) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return url.pathname + url.search + url.hash;
}

/** The fragment of `href` read as `a=1&b=2`: the value of `name` there, and the address without it. */
export function takeFromFragment(href: string, name: string): { value: string | null; address: string } {
  const url = new URL(href);
  const params = new URLSearchParams(url.hash.slice(1));
  const value = params.get(name);
  params.delete(name);
  const rest = params.toString();
  return { value, address: url.pathname + url.search + (rest ? `#${rest}` : '') };
}

/** Show `address` in the address bar without loading it. */
export function replaceAddress(address: string): void {
  history.replaceState(history.state, '', address);
}
