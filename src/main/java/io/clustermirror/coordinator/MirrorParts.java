package io.clustermirror.coordinator;

import io.clustermirror.fetch.DataPlane;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.mirror.PreservedTail;
import io.clustermirror.truncation.PrefixCheck;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * One mirror's running parts as the partition lifecycle and the stop flow use them: its data plane, LOG_TRUNCATION's
 * prefix check, the two destination-topic operations they need, and the workers that run the blocking ones.
 * {@link MirrorRuntime} is the real one; {@code PartitionLifecycleTest} drives the lifecycle with fakes.
 */
interface MirrorParts {

    DataPlane dataPlane();

    PrefixCheck prefixCheck();

    /** Deletes and recreates the destination topic like the source's (policy {@code recreate}); blocking. */
    void recreateTopic(String topic, Collection<String> excludedProperties) throws Exception;

    /** Lifts the read-only guards of stopped destination topics, in one request: they become writable; blocking. */
    void liftGuards(Collection<String> topics) throws Exception;

    /**
     * Gives the mirror-owned configs of stopped destination topics back the source's values, all at once; the error of
     * each topic that could not be restored. Blocking.
     */
    Map<String, Exception> restoreConfigs(Collection<String> topics) throws InterruptedException;

    /**
     * Copies the records only the destination partitions hold (from the first offset where each differs from the
     * source to its end) into the topic's preservation topic; what was copied, for the partitions that are not a prefix
     * of the source. Blocking.
     */
    List<PreservedTail> preserveDivergentTails(List<MirrorPartition> partitions) throws Exception;

    /** Where the blocking steps run. */
    Executor workers();
}
