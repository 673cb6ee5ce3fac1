import { createRequire } from "node:module";
import { isIP } from "node:net";

// ipaddr.js is CommonJS (module.exports = ipaddr) and types itself with `export =`: loaded through require.
const ipaddr = createRequire(import.meta.url)("ipaddr.js") as typeof import("ipaddr.js");

// Ranges ipaddr.js (2.2) files under "unicast" that still lead elsewhere: IPv4-compatible addresses (::/96,
// deprecated, routed to the IPv4 address they embed by some stacks) and NAT64's local-use prefix (RFC 8215).
const EMBEDDING = [ipaddr.parseCIDR("::/96"), ipaddr.parseCIDR("64:ff9b:1::/48")];

// IPv6 ranges that are not global though ipaddr.js (2.2) files them under "unicast": site-local (fec0::/10, deprecated
// by RFC 3879 but still routed inside some networks), the documentation prefix of RFC 9637 (3fff::/20) and the SRv6
// segment identifiers of RFC 9602 (5f00::/16), all "Globally Reachable: False" in IANA's special-purpose registry.
const NOT_GLOBAL = [ipaddr.parseCIDR("fec0::/10"), ipaddr.parseCIDR("3fff::/20"), ipaddr.parseCIDR("5f00::/16")];

/**
 * True for a unicast address on the public Internet, classified by ipaddr.js's special-purpose ranges (RFC 6890 and
 * later): loopback, unspecified, private, carrier-grade NAT, link-local, unique-local, multicast, documentation,
 * benchmarking and reserved ones are not. An IPv4-mapped address (::ffff:a.b.c.d) is judged by its IPv4 address;
 * every other IPv6 form that embeds or translates to IPv4 (IPv4-compatible, NAT64 rfc6052 and 64:ff9b:1::/48, the
 * rfc6145 translated form, 6to4, Teredo) is refused outright: a webhook or an agent endpoint has no need of one.
 */
export function isPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return ipaddr.IPv4.parse(address).range() === "unicast";
  if (family !== 6 || address.includes("%")) return false; // a zone index names a link: never public
  // The URL parser's canonical form first: ipaddr.js reads a dotted tail (::127.0.0.1) as IPv4-mapped, which it is not.
  const v6 = ipaddr.IPv6.parse(new URL(`http://[${address}]/`).hostname.slice(1, -1));
  if (EMBEDDING.some(([net, bits]) => v6.match(net, bits))) return false;
  if (NOT_GLOBAL.some(([net, bits]) => v6.match(net, bits))) return false;
  if (v6.isIPv4MappedAddress()) return v6.toIPv4Address().range() === "unicast";
  return v6.range() === "unicast";
}
