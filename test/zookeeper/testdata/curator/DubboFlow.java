// DubboFlow does, on Apache Curator 5.4, what Dubbo 3's ZookeeperRegistry,
// Curator5ZookeeperClient, ZookeeperDynamicConfiguration,
// ZookeeperMetadataReport and ZookeeperServiceDiscovery do (wire spec §2.3,
// §5): a provider process registered through one server (args[0]) and a
// consumer process subscribed through another (args[1]), each its own
// CuratorFramework built as Dubbo builds it. It prints "OK <step>" per
// step, "FAIL <step>: why" and exits 1 on the first failure, "DONE" at the
// end. The Go test (curator_test.go) compiles it with javac against the
// Debian jars and runs it against a real ZooKeeper and against two agents.
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.concurrent.*;
import java.util.function.Supplier;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorWatcher;
import org.apache.curator.framework.recipes.cache.NodeCache;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.x.discovery.ServiceCache;
import org.apache.curator.x.discovery.ServiceDiscovery;
import org.apache.curator.x.discovery.ServiceDiscoveryBuilder;
import org.apache.curator.x.discovery.ServiceInstance;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

public class DubboFlow {
    static final String IFACE = "org.apache.dubbo.demo.DemoService";
    static final String ROOT = "/dubbo/" + IFACE;
    static final long WAIT_MS = Long.getLong("wait.ms", 20000);

    public static void main(String[] args) throws Exception {
        try {
            run(args[0], args[1]);
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

    static void check(String step, boolean cond, Object detail) throws Failure {
        if (!cond) throw new Failure(step + ": " + detail);
        ok(step);
    }

    /** Polls until the value satisfies want, as a test waits for a condition. */
    static <T> T eventually(String step, Supplier<T> get, java.util.function.Predicate<T> want) throws Failure {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        T v = get.get();
        while (!want.test(v)) {
            if (System.currentTimeMillis() > deadline) throw new Failure(step + ": last value " + v);
            try { Thread.sleep(20); } catch (InterruptedException e) { throw new Failure(step + ": interrupted"); }
            v = get.get();
        }
        ok(step);
        return v;
    }

    /** Curator5ZookeeperClient's constructor: Dubbo's defaults. */
    static CuratorFramework client(String addr) throws Exception {
        CuratorFramework c = CuratorFrameworkFactory.builder().connectString(addr)
            .retryPolicy(new RetryNTimes(1, 1000)).connectionTimeoutMs(30000)
            .sessionTimeoutMs(60000).ensembleTracker(true).build();
        c.start();
        if (!c.blockUntilConnected(30, TimeUnit.SECONDS)) throw new Failure("connect to " + addr);
        return c;
    }

    /** AbstractZookeeperClient.create: parents persistent (checkExists, then create), leaf ephemeral or not. */
    static void create(CuratorFramework c, String path, boolean ephemeral) throws Exception {
        int i = path.lastIndexOf('/');
        if (i > 0) {
            String parent = path.substring(0, i);
            if (c.checkExists().forPath(parent) == null) create(c, parent, false);
        }
        try {
            if (ephemeral) c.create().withMode(CreateMode.EPHEMERAL).forPath(path);
            else c.create().forPath(path);
        } catch (KeeperException.NodeExistsException e) {
            if (ephemeral) { // createEphemeral(faultTolerant=true): delete and create again
                c.delete().deletingChildrenIfNeeded().forPath(path);
                c.create().withMode(CreateMode.EPHEMERAL).forPath(path);
            }
        }
    }

    static String url(String u) { return URLEncoder.encode(u, StandardCharsets.UTF_8); }

    /** ZookeeperRegistry.doSubscribe for one category: a re-arming CuratorWatcher on the children. */
    static BlockingQueue<List<String>> subscribe(CuratorFramework c, String category) throws Exception {
        String path = ROOT + "/" + category;
        create(c, path, false);
        BlockingQueue<List<String>> q = new LinkedBlockingQueue<>();
        CuratorWatcher w = new CuratorWatcher() {
            public void process(WatchedEvent e) throws Exception {
                if (e.getType() == Watcher.Event.EventType.None) return; // CuratorWatcherImpl ignores these
                if (e.getState() != Watcher.Event.KeeperState.SyncConnected) throw new Failure("event state " + e.getState());
                q.add(c.getChildren().usingWatcher(this).forPath(path));
            }
        };
        q.add(c.getChildren().usingWatcher(w).forPath(path));
        return q;
    }

    /** Waits for a notified list (the latest one) matching want. */
    static List<String> notified(String step, BlockingQueue<List<String>> q, java.util.function.Predicate<List<String>> want) throws Exception {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        List<String> last = null;
        while (true) {
            List<String> l = q.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
            if (l == null) throw new Failure(step + ": last notification " + last);
            last = l;
            if (want.test(l)) { ok(step); return l; }
        }
    }

    static void run(String providerAddr, String consumerAddr) throws Exception {
        CuratorFramework provider = client(providerAddr);
        CuratorFramework consumer = client(consumerAddr);
        check("negotiated session timeout 40000", provider.getZookeeperClient().getZooKeeper().getSessionTimeout() == 40000,
            provider.getZookeeperClient().getZooKeeper().getSessionTimeout());

        // Consumer: subscribe to providers, configurators, routers; register itself.
        BlockingQueue<List<String>> providers = subscribe(consumer, "providers");
        BlockingQueue<List<String>> configurators = subscribe(consumer, "configurators");
        subscribe(consumer, "routers");
        String consumerURL = "consumer://10.0.0.9/" + IFACE + "?application=demo-consumer&category=consumers&check=false&side=consumer";
        create(consumer, ROOT + "/consumers/" + url(consumerURL), true);
        ok("consumer registered");
        notified("consumer starts with no provider", providers, List::isEmpty);

        // Config center listener (addTargetDataListener -> NodeCache).
        String cfgPath = "/dubbo/config/dubbo/" + IFACE + ".configurators";
        BlockingQueue<String> cfgEvents = new LinkedBlockingQueue<>();
        NodeCache nc = new NodeCache(consumer, cfgPath);
        nc.getListenable().addListener(() -> {
            if (nc.getCurrentData() != null)
                cfgEvents.add(new String(nc.getCurrentData().getData(), StandardCharsets.UTF_8) + " v" + nc.getCurrentData().getStat().getVersion());
        });
        nc.start();

        // Provider registers (ephemeral, dynamic=true).
        String providerURL = "dubbo://10.0.0.5:20880/" + IFACE + "?anyhost=true&application=demo-provider&dynamic=true&interface=" + IFACE + "&methods=sayHello&side=provider";
        String leaf = ROOT + "/providers/" + url(providerURL);
        create(provider, leaf, true);
        Stat st = provider.checkExists().forPath(leaf);
        check("provider node is ephemeral, version 0", st != null && st.getEphemeralOwner() == provider.getZookeeperClient().getZooKeeper().getSessionId() && st.getVersion() == 0, st);
        try {
            provider.create().withMode(CreateMode.EPHEMERAL).forPath(leaf);
            throw new Failure("second create of the provider node: no NODEEXISTS");
        } catch (KeeperException.NodeExistsException e) { ok("NODEEXISTS on a second create"); }
        notified("consumer notified of the provider", providers, l -> l.equals(List.of(url(providerURL))));

        // An admin writes a persistent override (dynamic=false) and a config-center rule.
        String override = "override://0.0.0.0/" + IFACE + "?category=configurators&dynamic=false&enabled=true&timeout=1000";
        create(provider, ROOT + "/configurators/" + url(override), false);
        notified("consumer notified of the override", configurators, l -> l.equals(List.of(url(override))));
        provider.create().creatingParentsIfNeeded().forPath(cfgPath, "timeout: 1000".getBytes(StandardCharsets.UTF_8));
        String ev = cfgEvents.poll(WAIT_MS, TimeUnit.MILLISECONDS);
        check("config-center NodeCache sees the rule, version 0", "timeout: 1000 v0".equals(ev), ev);

        // Service-name mapping CAS (MetadataServiceNameMapping.map), from both sides.
        String mapping = "/dubbo/mapping/" + IFACE;
        provider.create().creatingParentsIfNeeded().forPath(mapping, "demo-provider".getBytes(StandardCharsets.UTF_8));
        Stat ms = eventually("consumer side sees the mapping", () -> {
            try { return consumer.checkExists().forPath(mapping); } catch (Exception e) { return null; }
        }, s -> s != null);
        consumer.setData().withVersion(ms.getVersion()).forPath(mapping, "demo-provider,demo-consumer".getBytes(StandardCharsets.UTF_8));
        ok("mapping CAS with the read version");
        try {
            consumer.setData().withVersion(ms.getVersion()).forPath(mapping, "stale".getBytes(StandardCharsets.UTF_8));
            throw new Failure("stale CAS: no BADVERSION");
        } catch (KeeperException.BadVersionException e) { ok("BADVERSION on a stale CAS"); }

        // Application-level discovery: curator-x-discovery, ServiceCache (CuratorCache, addWatch).
        ServiceDiscovery<Void> sdP = ServiceDiscoveryBuilder.builder(Void.class).client(provider).basePath("/services").build();
        sdP.start();
        sdP.registerService(ServiceInstance.<Void>builder().name("demo-provider").id("10.0.0.5:20880").address("10.0.0.5").port(20880).build());
        ServiceDiscovery<Void> sdC = ServiceDiscoveryBuilder.builder(Void.class).client(consumer).basePath("/services").build();
        sdC.start();
        ServiceCache<Void> cache = sdC.serviceCacheBuilder().name("demo-provider").build();
        cache.start();
        eventually("ServiceCache lists the instance", () -> cache.getInstances().size(), n -> n == 1);

        // The provider process ends: Dubbo closes its client (closeSession).
        sdP.close();
        provider.close();
        ok("provider session closed");
        notified("consumer notified that no provider is left", providers, List::isEmpty);
        eventually("ServiceCache empties", () -> cache.getInstances().size(), n -> n == 0);
        List<String> rules = consumer.getChildren().forPath(ROOT + "/configurators");
        check("the persistent override outlives its writer", rules.equals(List.of(url(override))), rules);
        // Dubbo reads the mapping as a set of names; an agent merges it as
        // one and keeps it sorted (wire spec §5.3), so compare sets.
        String m = new String(consumer.getData().forPath(mapping), StandardCharsets.UTF_8);
        check("the mapping outlives its writer", new TreeSet<>(List.of(m.split(","))).equals(new TreeSet<>(List.of("demo-provider", "demo-consumer"))), m);

        // Consumer shuts down: unregister (delete), close.
        cache.close();
        sdC.close();
        nc.close();
        consumer.delete().deletingChildrenIfNeeded().forPath(ROOT + "/consumers/" + url(consumerURL));
        consumer.delete().deletingChildrenIfNeeded().forPath(ROOT + "/configurators");
        ok("consumer unregistered");
        consumer.close();
    }
}
