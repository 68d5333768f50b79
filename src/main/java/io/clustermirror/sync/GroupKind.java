package io.clustermirror.sync;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListConsumerGroupOffsetsSpec;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

import io.clustermirror.kafka.KafkaUni;
import io.clustermirror.mirror.MirrorPartition;
import io.clustermirror.sync.plan.ShareOffsetReadBack;
import io.smallrye.mutiny.Uni;

/** Consumer groups and share groups: how each is listed, read and written. The sync logic is the same. */
enum GroupKind {
    CONSUMER("ConsumerGroupOffsetSyncError", ListGroupsOptions.forConsumerGroups()) {
        @Override
        KafkaFuture<Map<String, Map<TopicPartition, OffsetAndMetadata>>> offsets(Admin admin, Set<String> groups,
                Set<TopicPartition> partitions) {
            Map<String, ListConsumerGroupOffsetsSpec> specs = new HashMap<>();
            groups.forEach(g -> specs.put(g, new ListConsumerGroupOffsetsSpec().topicPartitions(partitions)));
            return admin.listConsumerGroupOffsets(specs).all();
        }

        @Override
        Uni<Void> alter(Admin admin, String group, Map<TopicPartition, Long> offsets) {
            Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
            offsets.forEach((tp, o) -> committed.put(tp, new OffsetAndMetadata(o)));
            return KafkaUni.of(admin.alterConsumerGroupOffsets(group, committed).all());
        }
    },
    SHARE("ShareGroupOffsetSyncError", ListGroupsOptions.forShareGroups()) {
        @Override
        KafkaFuture<Map<String, Map<TopicPartition, OffsetAndMetadata>>> offsets(Admin admin, Set<String> groups,
                Set<TopicPartition> partitions) {
            // the partitions are named: an empty spec lists only those the share group has initialised
            Map<String, ListShareGroupOffsetsSpec> specs = new HashMap<>();
            groups.forEach(g -> specs.put(g, new ListShareGroupOffsetsSpec().topicPartitions(partitions)));
            return admin.listShareGroupOffsets(specs).all();
        }

        /** Written, then read back: a 4.1.x destination answers success and applies nothing (see ShareOffsetReadBack). */
        @Override
        Uni<Void> alter(Admin admin, String group, Map<TopicPartition, Long> offsets) {
            return KafkaUni.of(admin.alterShareGroupOffsets(group, offsets).all())
                    .chain(() -> KafkaUni.of(offsets(admin, Set.of(group), offsets.keySet())))
                    .invoke(readBack -> ShareOffsetReadBack.verify(offsets, startOffsets(readBack.getOrDefault(group, Map.of()))))
                    .replaceWithVoid();
        }
    };

    private final String errorKind;
    private final ListGroupsOptions listing;

    GroupKind(String errorKind, ListGroupsOptions listing) {
        this.errorKind = errorKind;
        this.listing = listing;
    }

    String errorKind() {
        return errorKind;
    }

    ListGroupsOptions listing() {
        return listing;
    }

    abstract KafkaFuture<Map<String, Map<TopicPartition, OffsetAndMetadata>>> offsets(Admin admin, Set<String> groups,
            Set<TopicPartition> partitions);

    abstract Uni<Void> alter(Admin admin, String group, Map<TopicPartition, Long> offsets);

    /** The offsets of a listing, {@code null} where a partition has none. */
    static Map<TopicPartition, Long> startOffsets(Map<TopicPartition, OffsetAndMetadata> listed) {
        Map<TopicPartition, Long> offsets = new HashMap<>();
        listed.forEach((tp, offset) -> offsets.put(tp, offset == null ? null : offset.offset()));
        return offsets;
    }

    /** Committed offsets per group, of the mirrored partitions only, named the mirror's way. */
    static Map<String, Map<MirrorPartition, Long>> toMirror(Map<String, Map<TopicPartition, OffsetAndMetadata>> offsets,
            Map<TopicPartition, MirrorPartition> mirrored) {
        Map<String, Map<MirrorPartition, Long>> result = new HashMap<>();
        offsets.forEach((group, byPartition) -> {
            Map<MirrorPartition, Long> converted = new HashMap<>();
            if (byPartition != null) {
                byPartition.forEach((tp, om) -> {
                    if (om != null && mirrored.containsKey(tp)) {
                        converted.put(mirrored.get(tp), om.offset());
                    }
                });
            }
            result.put(group, converted);
        });
        return result;
    }
}
