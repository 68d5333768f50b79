package io.clustermirror.sync;

import io.clustermirror.mirror.Mirror;
import io.clustermirror.mirror.MirrorConfig;
import io.clustermirror.mirror.OwnedTopicConfigs;
import io.clustermirror.sync.plan.ConfigSyncPlan;
import io.smallrye.mutiny.Uni;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jboss.logging.Logger;

/**
 * Topic configs of every topic being mirrored, source to destination, in two describes and one alter: what the source
 * sets explicitly is set, what it no longer sets is deleted, except the excluded properties and the configs the mirror
 * owns on the destination ({@link OwnedTopicConfigs}).
 */
final class ConfigStep {

    private static final Logger LOGGER = Logger.getLogger(ConfigStep.class);

    private ConfigStep() {}

    static Uni<Void> sync(
            Mirror mirror,
            Set<String> activeTopics,
            ClusterMetadata source,
            ClusterMetadata destination,
            CycleLog log) {
        if (activeTopics.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        List<String> excluded = mirror.config()
                .list(MirrorConfig.TOPIC_PROPERTIES_EXCLUDE, MirrorConfig.DEFAULT_TOPIC_PROPERTIES_EXCLUDE);
        return source.topicConfigs(activeTopics, log)
                .chain(sourceConfigs -> destination
                        .topicConfigs(activeTopics, log)
                        .chain(destinationConfigs -> {
                            Map<String, ConfigSyncPlan> plans = new HashMap<>();
                            for (String topic : activeTopics) {
                                Map<String, String> from = sourceConfigs.get(topic);
                                Map<String, String> to = destinationConfigs.get(topic);
                                if (from == null || to == null) {
                                    continue; // not there (yet) on one side: the topic step handles it
                                }
                                ConfigSyncPlan plan = ConfigSyncPlan.diff(from, to, excluded, OwnedTopicConfigs.NAMES);
                                if (!plan.isEmpty()) {
                                    plans.put(topic, plan);
                                    LOGGER.debugf(
                                            "Mirror %s: config of %s: set %s, delete %s",
                                            mirror.name(), topic, plan.set(), plan.delete());
                                }
                            }
                            return destination.alterTopicConfigs(plans, log);
                        }));
    }
}
