// The payload Java Dubbo 3 registers with curator-x-discovery, declared
// with Dubbo's class name and fields so the JSON (its "@class" among them)
// is the JSON Dubbo writes.
package org.apache.dubbo.registry.zookeeper;

import java.util.HashMap;
import java.util.Map;

public class ZookeeperInstance {
    private String id;
    private String name;
    private Map<String, String> metadata = new HashMap<>();

    public ZookeeperInstance() {}

    public ZookeeperInstance(String id, String name, Map<String, String> metadata) {
        this.id = id;
        this.name = name;
        this.metadata = metadata;
    }

    public String getId() { return id; }
    public void setId(String id) { this.id = id; }
    public String getName() { return name; }
    public void setName(String name) { this.name = name; }
    public Map<String, String> getMetadata() { return metadata; }
    public void setMetadata(Map<String, String> metadata) { this.metadata = metadata; }
}
