package io.clustermirror.coordinator;

import java.util.List;

import io.clustermirror.mirror.OpenTransaction;

/** What the data plane knows now of a partition it mirrors: the last mirrored epoch, and the transactions it holds open. */
public record LiveProgress(int lastMirroredEpoch, List<OpenTransaction> openTransactions) {

    public LiveProgress {
        openTransactions = List.copyOf(openTransactions);
    }
}
