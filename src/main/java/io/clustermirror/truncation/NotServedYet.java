package io.clustermirror.truncation;

import io.clustermirror.mirror.Failures;
import org.apache.kafka.common.errors.LeaderNotAvailableException;
import org.apache.kafka.common.errors.NotLeaderOrFollowerException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

/**
 * A check that failed because a cluster does not serve the partition yet: its topic was just created (or grown) and
 * the brokers have not applied it. A KRaft broker applies the creation of thousands of partitions in tens of seconds
 * (it creates every log as it does), and until then it answers UNKNOWN_TOPIC_OR_PARTITION. LOG_TRUNCATION asks such a
 * partition again within {@link #GRACE_MS} of entering the state instead of failing it (decisions §36). Pure.
 */
public final class NotServedYet {

    /** How long after entering LOG_TRUNCATION a partition not served yet is asked again rather than FAILED. */
    public static final long GRACE_MS = 120_000;

    private NotServedYet() {}

    /** Whether the failure (or one of its causes) says the partition is not served (yet). */
    public static boolean is(Throwable failure) {
        return Failures.causedBy(
                failure,
                UnknownTopicOrPartitionException.class,
                LeaderNotAvailableException.class,
                NotLeaderOrFollowerException.class);
    }

    /** When to ask again, after {@code waitedMs} in the state: soon at first, then less often (250 ms to 5 s). */
    public static long delayMs(long waitedMs) {
        return Math.min(5_000, Math.max(250, waitedMs / 4));
    }
}
