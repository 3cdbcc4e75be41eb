// AppDiscovery does, on Apache Curator 5.4's curator-x-discovery, what
// Dubbo 3's ZookeeperServiceDiscovery does for application-level discovery
// (docs/protocols/dubbo-apps.md): a provider registers its instance
// through one server (args[0]), updates it with a new metadata revision,
// registers a second and unregisters the first; a consumer on another
// server (args[1]) watches the application with a ServiceCache and queries
// it. With args[2] (an instance id) it first reads that instance, which
// something else registered (namecast's HTTP door), and expects the cache
// to list it.
//
// It prints "OK <step>" per step, "FAIL <step>: why" and exits 1 on the
// first failure, "T <line>" for the transcript the Go test compares between
// a real ZooKeeper and two agents (instances, data, and the states the
// ServiceCache's listener saw), and "DONE" at the end.
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.function.Predicate;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.curator.x.discovery.details.ServiceCacheListener;
import org.apache.dubbo.registry.zookeeper.ZookeeperInstance;

public class AppDiscovery {
    static final String APP = "demo-provider";
    static final long WAIT_MS = Long.getLong("wait.ms", 20000);

    public static void main(String[] args) throws Exception {
        try {
            run(args[0], args[1], args.length > 2 ? args[2] : null);
            System.out.println("DONE");
            System.exit(0);
        } catch (Failure f) {
            System.out.println("FAIL " + f.getMessage());
            System.exit(1);
        }
    }

    static class Failure extends Exception {
        Failure(String m) { super(m); }
    }

    static void ok(String step) { System.out.println("OK " + step); System.out.flush(); }

    static void t(String line) { System.out.println("T " + line); System.out.flush(); }

    static <T> T eventually(String step, Supplier<T> get, Predicate<T> want) throws Failure {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        T last = null;
        while (System.currentTimeMillis() < deadline) {
            last = get.get();
            if (want.test(last)) { ok(step); return last; }
            try { Thread.sleep(20); } catch (InterruptedException e) { throw new Failure(step + ": interrupted"); }
        }
        throw new Failure(step + ": still " + last + " after " + WAIT_MS + " ms");
    }

    /** Dubbo's CuratorFrameworkUtils.buildCuratorFramework: its retry policy, Curator's default session. */
    static CuratorFramework client(String addr) throws Failure, InterruptedException {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(addr)
                .retryPolicy(new ExponentialBackoffRetry(50, 10, 500)).build();
        c.start();
        if (!c.blockUntilConnected(20, TimeUnit.SECONDS)) throw new Failure("connect " + addr);
        return c;
    }

    static ServiceDiscovery<ZookeeperInstance> discovery(CuratorFramework c) throws Exception {
        ServiceDiscovery<ZookeeperInstance> sd = ServiceDiscoveryBuilder.builder(ZookeeperInstance.class)
                .client(c).basePath("/services").build();
        sd.start();
        return sd;
    }

    /** Dubbo's CuratorFrameworkUtils.build: id host:port, the payload carrying the metadata. */
    static ServiceInstance<ZookeeperInstance> instance(String host, int port, String revision) throws Exception {
        String id = host + ":" + port;
        Map<String, String> md = new TreeMap<>();
        md.put("dubbo.metadata.revision", revision);
        md.put("dubbo.metadata.storage-type", "local");
        md.put("dubbo.endpoints", "[{\"port\":" + port + ",\"protocol\":\"dubbo\"}]");
        return ServiceInstance.<ZookeeperInstance>builder().id(id).name(APP).address(host).port(port)
                .payload(new ZookeeperInstance(id, APP, md)).build();
    }

    static String describe(Collection<ServiceInstance<ZookeeperInstance>> list) {
        List<String> out = new ArrayList<>();
        for (ServiceInstance<ZookeeperInstance> i : list) {
            ZookeeperInstance p = i.getPayload();
            out.add(i.getId() + " " + i.getName() + " " + i.getAddress() + ":" + i.getPort() + " rev=" +
                    (p == null ? "-" : p.getMetadata().get("dubbo.metadata.revision")) + " enabled=" + i.isEnabled());
        }
        Collections.sort(out);
        return out.toString();
    }

    static void run(String providerAddr, String consumerAddr, String external) throws Exception {
        CuratorFramework consumer = client(consumerAddr);
        ServiceDiscovery<ZookeeperInstance> sdC = discovery(consumer);
        ServiceCache<ZookeeperInstance> cache = sdC.serviceCacheBuilder().name(APP).build();
        // The states the listener saw, one entry per distinct state in a row:
        // a gap (an instance missing for a moment) would show as one more.
        List<String> seen = Collections.synchronizedList(new ArrayList<>());
        cache.addListener(new ServiceCacheListener() {
            public void cacheChanged() {
                String s = describe(cache.getInstances());
                synchronized (seen) {
                    if (seen.isEmpty() || !seen.get(seen.size() - 1).equals(s)) seen.add(s);
                }
            }
            public void stateChanged(CuratorFramework c, ConnectionState st) {}
        });
        cache.start();
        ok("consumer's ServiceCache started before any instance");

        if (external != null) {
            // An instance registered by something else than Curator.
            ServiceInstance<ZookeeperInstance> ext = eventually("the external instance is readable",
                    () -> { try { return sdC.queryForInstance(APP, external); } catch (Exception e) { return null; } },
                    i -> i != null);
            t("external " + describe(List.of(ext)) + " payload=" + (ext.getPayload() == null ? null : new TreeMap<>(ext.getPayload().getMetadata())));
            eventually("the ServiceCache lists the external instance", () -> describe(cache.getInstances()),
                    s -> s.contains(external));
            return;
        }

        CuratorFramework provider = client(providerAddr);
        ServiceDiscovery<ZookeeperInstance> sdP = discovery(provider);
        ServiceInstance<ZookeeperInstance> a = instance("10.0.0.5", 20880, "r1");
        sdP.registerService(a);
        step("register 10.0.0.5:20880 rev r1", cache, seen, 1, "rev=r1");

        byte[] raw = consumer.getData().forPath("/services/" + APP + "/10.0.0.5:20880");
        ObjectNode tree = (ObjectNode) new ObjectMapper().readTree(raw);
        tree.put("registrationTimeUTC", 0);
        t("data " + tree);

        sdP.updateService(instance("10.0.0.5", 20880, "r2"));
        step("update 10.0.0.5:20880 to rev r2", cache, seen, 1, "rev=r2");

        t("queryForNames " + new TreeSet<>(sdC.queryForNames()));
        t("queryForInstances " + describe(sdC.queryForInstances(APP)));
        t("queryForInstance " + describe(List.of(sdC.queryForInstance(APP, "10.0.0.5:20880"))));

        sdP.registerService(instance("10.0.0.6", 20880, "r2"));
        step("register 10.0.0.6:20880", cache, seen, 2, "10.0.0.6");
        t("queryForInstances " + describe(sdC.queryForInstances(APP)));

        sdP.unregisterService(a);
        step("unregister 10.0.0.5:20880", cache, seen, 1, "10.0.0.6");

        // The provider process ends: Dubbo closes its client (closeSession).
        sdP.close();
        provider.close();
        step("provider closed", cache, seen, 0, "");
        t("queryForInstances " + describe(sdC.queryForInstances(APP)));
        synchronized (seen) {
            for (String s : seen) t("cache saw " + s);
        }
        cache.close();
        sdC.close();
        consumer.close();
    }

    /** Waits until the cache, and then its listener, show n instances containing want. */
    static void step(String name, ServiceCache<ZookeeperInstance> cache, List<String> seen, int n, String want) throws Failure {
        String s = eventually(name + ": the ServiceCache lists it", () -> describe(cache.getInstances()),
                d -> cache.getInstances().size() == n && d.contains(want));
        eventually(name + ": the listener was told", () -> { synchronized (seen) { return seen.isEmpty() ? "" : seen.get(seen.size() - 1); } },
                last -> last.equals(s));
        t(name + ": " + s);
    }
}
