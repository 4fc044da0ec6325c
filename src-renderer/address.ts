/**
 * The page's own address, as the address bar shows it (path, query, hash): the serve token is taken out of
 * it, the shown Thread put in. Both go through here, so neither drops the other's parameters.
 */

/** `href` as path + query + hash, with the query parameter `name` set to `value`, or removed for null. */
export function addressWith(href: string, name: string, value: string | null): string {
  const url = new URL(href);
  if (value === null) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return url.pathname + url.search + url.hash;
}

/** Show `address` in the address bar without loading it. */
export function replaceAddress(address: string): void {
  history.replaceState(history.state, '', address);
}
