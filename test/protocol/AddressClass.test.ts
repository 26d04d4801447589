// Where result links may lead: the class of an address (v4, v6, IPv4-mapped), and the
// rule that refuses loopback, link-local, private and unspecified addresses unless the
// service's own address is of the same class. Pure.

import { test } from "uvu";
import * as assert from "uvu/assert";
import { addressClass, resultAddressRefusal } from "../../src/protocol/AddressClass.js";

test("addresses are classed by their ranges, IPv4-mapped IPv6 by the IPv4 address", () => {
  const cases: Record<string, string> = {
    "127.0.0.1": "loopback", "127.9.9.9": "loopback", "::1": "loopback", "[::1]": "loopback", "::ffff:127.0.0.1": "loopback", "::ffff:7f00:1": "loopback",
    "169.254.169.254": "link-local", "fe80::1": "link-local", "fe80::1%eth0": "link-local", "febf::1": "link-local",
    "10.0.0.1": "private", "172.16.0.1": "private", "172.31.255.255": "private", "192.168.1.1": "private", "100.64.0.1": "private",
    "fd00::2": "private", "fc00::1": "private", "::ffff:10.0.0.1": "private", "224.0.0.1": "private", "ff02::1": "private",
    "0.0.0.0": "unspecified", "0.1.2.3": "unspecified", "::": "unspecified", "not an address": "unspecified",
    "8.8.8.8": "public", "172.32.0.1": "public", "100.128.0.1": "public", "2001:db8::1": "public", "::ffff:8.8.8.8": "public", "192.0.2.2": "public",
  };
  for (const [address, cls] of Object.entries(cases)) assert.is(addressClass(address), cls, address);
});

test("a public address is always allowed; another only when the service is on an address of that class", () => {
  const remote = new Set(["public"] as const);
  assert.is(resultAddressRefusal("8.8.8.8", remote), undefined);
  for (const address of ["127.0.0.1", "::1", "169.254.169.254", "10.0.0.1", "fd00::2", "0.0.0.0"]) {
    assert.match(resultAddressRefusal(address, remote) ?? "", /^refusing to fetch a result link that leads to/, address);
  }
  assert.match(resultAddressRefusal("169.254.169.254", remote)!, "(a link-local address)");
  // The emulator on loopback hands out loopback links; a proxy on the local network, private ones.
  assert.is(resultAddressRefusal("127.0.0.1", new Set(["loopback"])), undefined);
  assert.is(resultAddressRefusal("10.1.2.3", new Set(["private"])), undefined);
  // ... but not links of another class.
  assert.ok(resultAddressRefusal("169.254.169.254", new Set(["loopback"])) !== undefined);
  assert.ok(resultAddressRefusal("10.1.2.3", new Set(["loopback"])) !== undefined);
  // A service whose name resolved to nothing: only public links.
  assert.ok(resultAddressRefusal("127.0.0.1", new Set()) !== undefined);
});

test.run();
