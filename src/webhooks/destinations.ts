// Where a webhook may be sent (pipeline.md §5, docs/DESIGN.md §104): never to this machine, a private network, a
// link-local address or a cloud's metadata service, unless SECINV_WEBHOOK_ALLOW_PRIVATE says so. A name is checked
// after it is resolved, every address it resolves to, and the connection is made to the addresses checked (the
// `lookup` the request is given), so that a name answering a public address at one resolution and a private one at
// the next (DNS rebinding) reaches nothing it was not checked for. Node's BlockList classifies the addresses; it
// matches an IPv4-mapped IPv6 address (::ffff:127.0.0.1) by the IPv4 rules.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/** The ranges refused, by the reason given; the first that matches names the reason (metadata before link-local). */
const REFUSED: readonly (readonly [reason: string, ranges: readonly string[]])[] = [
  ['unspecified', ['0.0.0.0/8', '::/128']],
  ['loopback', ['127.0.0.0/8', '::1/128']],
  // AWS, GCP and Azure (169.254.169.254, and AWS's IPv6 one), Alibaba (100.100.100.200), Oracle (192.0.0.192).
  ['metadata', ['169.254.169.254/32', 'fd00:ec2::254/128', '100.100.100.200/32', '192.0.0.192/32']],
  ['link-local', ['169.254.0.0/16', 'fe80::/10']],
  // RFC 1918, the carrier-grade shared range (RFC 6598), unique local IPv6 (fc00::/7) and the deprecated site-local.
  ['private', ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7', 'fec0::/10']],
  // Multicast, broadcast and the reserved and documentation ranges: nothing a receiver listens on.
  [
    'reserved',
    [
      '224.0.0.0/4',
      '240.0.0.0/4',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      'ff00::/8',
      '::/96',
      '2001:db8::/32',
    ],
  ],
];

const lists = REFUSED.map(([reason, ranges]) => {
  const list = new BlockList();
  for (const range of ranges) {
    const [network = '', prefix] = range.split('/');
    list.addSubnet(network, Number(prefix), isIP(network) === 4 ? 'ipv4' : 'ipv6');
  }
  return [reason, list] as const;
});

/** NAT64's well-known prefix (RFC 6052): the address of an IPv4 host, reached through a translator. */
function nat64Embedded(address: string): string | undefined {
  const match = /^64:ff9b::(?:([0-9a-f]{1,4}):([0-9a-f]{1,4})|(\d+\.\d+\.\d+\.\d+))$/i.exec(address);
  if (match === null) return undefined;
  if (match[3] !== undefined) return match[3];
  const high = parseInt(match[1]!, 16);
  const low = parseInt(match[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** Why an address is refused as a destination (`loopback`, `private`, …); undefined when it is not. */
export function refusedAddress(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  const embedded = family === 6 ? nat64Embedded(address) : undefined;
  if (embedded !== undefined) return refusedAddress(embedded);
  for (const [reason, list] of lists) if (list.check(address, family === 4 ? 'ipv4' : 'ipv6')) return reason;
  return undefined;
}

/** A destination refused, or one whose name did not resolve: the message says which address and why. */
export class DestinationRefused extends Error {
  override name = 'DestinationRefused';
}

/** A URL's host as an address or a name: IPv6 literals without their brackets. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

const refusal = (host: string, address: string, reason: string) =>
  new DestinationRefused(
    host === address ? `${address} is a ${reason} address` : `${host} resolves to ${address}, a ${reason} address`,
  );

/** Throws DestinationRefused when any of the host's addresses is refused. */
function checkAll(host: string, addresses: readonly LookupAddress[]): void {
  for (const { address } of addresses) {
    const reason = refusedAddress(address);
    if (reason !== undefined) throw refusal(host, address, reason);
  }
}

const resolveAll = (host: string): Promise<LookupAddress[]> =>
  new Promise((resolve, reject) =>
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error
        ? reject(new DestinationRefused(`${host} does not resolve (${error.code ?? error.message})`))
        : resolve(addresses),
    ),
  );

/**
 * Checks a destination as `webhooks create` and every send do: an address literal at once, a name once resolved (every
 * address it has). Nothing is checked when private destinations are allowed.
 */
export async function checkDestination(url: URL, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = hostOf(url);
  if (isIP(host) !== 0) {
    const reason = refusedAddress(host);
    if (reason !== undefined) throw refusal(host, host, reason);
    return;
  }
  checkAll(host, await resolveAll(host));
}

/**
 * The `lookup` of a request: resolves the name, refuses it when any address is refused, and hands the connection the
 * addresses it checked, so the connection goes to no address that was not checked. (An address literal is connected
 * to without a lookup: checkDestination checks it first.)
 */
export function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveAll(hostname).then(
      (addresses) => {
        const family = options.family === 4 || options.family === 6 ? options.family : 0;
        const usable = family === 0 ? addresses : addresses.filter((a) => a.family === family);
        try {
          if (!allowPrivate) checkAll(hostname, addresses);
          if (usable.length === 0) throw new DestinationRefused(`${hostname} has no IPv${family} address`);
        } catch (error) {
          callback(error as NodeJS.ErrnoException, '', 0);
          return;
        }
        if (options.all === true) callback(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
