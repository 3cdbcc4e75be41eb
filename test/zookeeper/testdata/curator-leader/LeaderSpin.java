import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.retry.RetryOneTime;

// A Curator LeaderSelector with autoRequeue against addr for the given
// seconds: the recipe creates ephemeral sequential nodes, which the
// namecast door refuses, and requeues at once after every failure.
public class LeaderSpin {
    public static void main(String[] args) throws Exception {
        String addr = args[0];
        long seconds = Long.parseLong(args[1]);
        try (CuratorFramework c = CuratorFrameworkFactory.newClient(addr, 10000, 5000, new RetryOneTime(100))) {
            c.start();
            c.blockUntilConnected();
            LeaderSelector ls = new LeaderSelector(c, "/leader", new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework client) throws Exception {
                    System.out.println("LEADER");
                    Thread.sleep(100);
                }
            });
            ls.autoRequeue();
            ls.start();
            System.out.println("STARTED");
            Thread.sleep(seconds * 1000);
            ls.close();
        }
        System.out.println("DONE");
    }
}
