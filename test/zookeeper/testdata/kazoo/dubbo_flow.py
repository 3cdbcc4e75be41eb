"""The Dubbo register/watch flow on kazoo 2.8 (Debian python3-kazoo).

A provider registered through one server (argv[1]) and a consumer watching
through another (argv[2]), each its own KazooClient: persistent parents with
ensure_path, the provider's URL as an ephemeral node, a ChildrenWatch on
providers and a DataWatch on a config-center rule, the error cases kazoo
users meet, and the provider's stop() emptying the consumer's list. Prints
"OK <step>" per step, "FAIL <step>: why" and exits 1 on the first failure,
"DONE" at the end. Run by kazoo_test.go under /usr/bin/python3.
"""
import queue
import sys
import time
from urllib.parse import quote

from kazoo.client import KazooClient
from kazoo.exceptions import (BadVersionError, NoChildrenForEphemeralsError,
                              NodeExistsError, NotEmptyError)

IFACE = "org.apache.dubbo.demo.DemoService"
ROOT = "/dubbo/" + IFACE
WAIT = 20.0


class Failure(Exception):
    pass


def ok(step):
    print("OK " + step, flush=True)


def check(step, cond, detail):
    if not cond:
        raise Failure("%s: %r" % (step, detail))
    ok(step)


def eventually(step, get, want):
    deadline = time.monotonic() + WAIT
    v = get()
    while not want(v):
        if time.monotonic() > deadline:
            raise Failure("%s: last value %r" % (step, v))
        time.sleep(0.02)
        v = get()
    ok(step)
    return v


def notified(step, q, want):
    deadline = time.monotonic() + WAIT
    last = None
    while True:
        try:
            last = q.get(timeout=max(0.001, deadline - time.monotonic()))
        except queue.Empty:
            raise Failure("%s: last notification %r" % (step, last))
        if want(last):
            ok(step)
            return last


def expect(step, exc, fn):
    try:
        fn()
    except exc:
        ok(step)
        return
    raise Failure("%s: no %s" % (step, exc.__name__))


def run(provider_addr, consumer_addr):
    provider = KazooClient(hosts=provider_addr, timeout=10)
    consumer = KazooClient(hosts=consumer_addr, timeout=10)
    provider.start(timeout=30)
    consumer.start(timeout=30)
    ok("connected")

    consumer.ensure_path(ROOT + "/providers")
    providers = queue.Queue()
    consumer.ChildrenWatch(ROOT + "/providers", lambda children: providers.put(sorted(children)))
    notified("consumer starts with no provider", providers, lambda l: l == [])
    cfg = "/dubbo/config/dubbo/%s.configurators" % IFACE
    rules = queue.Queue()

    def on_rule(data, stat):
        if data is not None:
            rules.put((data.decode(), stat.version))
    consumer.DataWatch(cfg, on_rule)

    url = quote("dubbo://10.0.0.5:20880/%s?application=demo-provider&side=provider" % IFACE, safe="")
    leaf = ROOT + "/providers/" + url
    provider.ensure_path(ROOT + "/providers")
    provider.create(leaf, b"10.0.0.5", ephemeral=True)
    stat = provider.exists(leaf)
    check("provider node is ephemeral, version 0",
          stat is not None and stat.ephemeralOwner == provider.client_id[0] and stat.version == 0, stat)
    expect("NodeExistsError on a second create", NodeExistsError, lambda: provider.create(leaf, ephemeral=True))
    expect("NoChildrenForEphemeralsError under the provider node", NoChildrenForEphemeralsError,
           lambda: provider.create(leaf + "/x"))
    notified("consumer notified of the provider", providers, lambda l: l == [url])
    children, stat = consumer.get_children(ROOT + "/providers", include_data=True)
    check("get_children with its Stat", children == [url] and stat.numChildren == 1, (children, stat))

    provider.create(cfg, b"timeout: 1000", makepath=True)
    r = rules.get(timeout=WAIT)
    check("DataWatch sees the rule, version 0", r == ("timeout: 1000", 0), r)
    data, stat = eventually("consumer side reads the rule", lambda: consumer.get(cfg) if consumer.exists(cfg) else (None, None),
                            lambda v: v[0] == b"timeout: 1000")
    consumer.set(cfg, b"timeout: 2000", version=stat.version)
    r = rules.get(timeout=WAIT)
    check("DataWatch sees the update, version 1", r == ("timeout: 2000", 1), r)
    expect("BadVersionError on a stale set", BadVersionError, lambda: consumer.set(cfg, b"stale", version=stat.version))
    expect("NotEmptyError deleting a parent", NotEmptyError, lambda: consumer.delete(ROOT + "/providers"))

    provider.stop()
    provider.close()
    ok("provider stopped")
    notified("consumer notified that no provider is left", providers, lambda l: l == [])
    consumer.delete("/dubbo/config", recursive=True)
    consumer.stop()
    consumer.close()
    ok("consumer stopped")


if __name__ == "__main__":
    try:
        run(sys.argv[1], sys.argv[2])
    except Failure as f:
        print("FAIL %s" % f, flush=True)
        sys.exit(1)
    print("DONE", flush=True)
