package io.clustermirror.nativeimage;

import io.clustermirror.api.AlterMirrorConfigRequest;
import io.clustermirror.api.CreateMirrorRequest;
import io.clustermirror.api.DivergenceDescription;
import io.clustermirror.api.InstanceDescription;
import io.clustermirror.api.InstanceList;
import io.clustermirror.api.InstanceResource;
import io.clustermirror.api.LossAtStopDescription;
import io.clustermirror.api.MirrorDescription;
import io.clustermirror.api.MirrorList;
import io.clustermirror.api.MirrorProgressDescription;
import io.clustermirror.api.MirrorResource;
import io.clustermirror.api.MirrorSummary;
import io.clustermirror.api.OpenTransactionDescription;
import io.clustermirror.api.PartitionDescription;
import io.clustermirror.api.PartitionLagDescription;
import io.clustermirror.api.PartitionProgressDescription;
import io.clustermirror.api.Problem;
import io.clustermirror.api.PromoteResponse;
import io.clustermirror.api.PromoteTopicsRequest;
import io.clustermirror.api.PromotedPartitionDescription;
import io.clustermirror.api.PromotionDescription;
import io.clustermirror.api.ServiceConfigDescription;
import io.clustermirror.api.ServiceConfigList;
import io.clustermirror.api.ServiceConfigResource;
import io.clustermirror.api.ServiceConfigValue;
import io.clustermirror.api.StartTopicsRequest;
import io.clustermirror.api.StartVerificationRequest;
import io.clustermirror.api.SyncStatus;
import io.clustermirror.api.TopicDescription;
import io.clustermirror.api.TopicResource;
import io.clustermirror.api.TopicSummary;
import io.clustermirror.api.TopicsRequest;
import io.clustermirror.api.TopicsResponse;
import io.clustermirror.api.TruncationDescription;
import io.clustermirror.api.VerificationDescription;
import io.clustermirror.api.VerificationList;
import io.clustermirror.api.VerificationResource;
import io.clustermirror.coordinator.MirrorStateAssignor;
import io.clustermirror.coordinator.StateOwnership;
import io.clustermirror.state.AclsRecord;
import io.clustermirror.state.DivergenceRecord;
import io.clustermirror.state.MirrorRecord;
import io.clustermirror.state.PartitionRecord;
import io.clustermirror.state.PromotionRecord;
import io.clustermirror.state.SecretCipher;
import io.clustermirror.state.ServiceConfigRecord;
import io.clustermirror.state.StateKey;
import io.clustermirror.state.VerifiedRecord;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * What a native executable must keep for reflection, in one place (issue 20): the classes Jackson reads and writes
 * through an {@code ObjectMapper} of our own, which Quarkus cannot see from the REST signatures: the
 * {@code __mirror_state} records ({@code StateSerde}) and the request bodies {@code RequestBodies} parses strictly, and
 * every API body besides, with the types of their fields ({@code registerFullHierarchy}); and the resources whose
 * methods' JAX-RS annotations {@code HttpGuards} and {@code AccessFilter} read at run time; the state group's assignor,
 * which kafka-clients builds from its class name, and the messages it exchanges. {@code
 * NativeRegistrationsTest} fails when a state record or an API record is missing here.
 *
 * <p>What needs nothing here: kafka-clients' own classes (the Quarkus Kafka extension registers the serializers, SASL
 * login modules and callback handlers; the data plane's NetworkClient, Selector and request classes are plain calls);
 * the config providers ({@code SourceConfigProviders} constructs them, no class name is looked up); the security
 * extensions (Elytron properties file, SmallRye JWT) register their own; re2j is plain Java. A package of its own, which
 * nothing uses and which may name every other: the one place that knows both the API's and the state's classes.
 */
@RegisterForReflection(
        registerFullHierarchy = true,
        targets = {
            // __mirror_state records (StateSerde)
            StateKey.class,
            MirrorRecord.class,
            PartitionRecord.class,
            PromotionRecord.class,
            DivergenceRecord.class,
            AclsRecord.class,
            ServiceConfigRecord.class,
            VerifiedRecord.class,
            SecretCipher.Sealed.class,
            // request bodies (RequestBodies)
            CreateMirrorRequest.class,
            AlterMirrorConfigRequest.class,
            StartTopicsRequest.class,
            TopicsRequest.class,
            StartVerificationRequest.class,
            PromoteTopicsRequest.class,
            ServiceConfigValue.class,
            // response bodies
            Problem.class,
            MirrorList.class,
            MirrorSummary.class,
            MirrorDescription.class,
            TopicSummary.class,
            TopicDescription.class,
            PartitionDescription.class,
            PartitionProgressDescription.class,
            TruncationDescription.class,
            MirrorProgressDescription.class,
            PartitionLagDescription.class,
            OpenTransactionDescription.class,
            LossAtStopDescription.class,
            DivergenceDescription.class,
            PromoteResponse.class,
            PromotionDescription.class,
            PromotedPartitionDescription.class,
            TopicsResponse.class,
            ServiceConfigList.class,
            ServiceConfigDescription.class,
            SyncStatus.class,
            VerificationDescription.class,
            VerificationDescription.Progress.class,
            VerificationDescription.Partition.class,
            VerificationDescription.Difference.class,
            VerificationList.class,
            InstanceList.class,
            InstanceDescription.class,
            // the state group: the assignor Kafka builds by class name, and its messages (JSON)
            MirrorStateAssignor.class,
            MirrorStateAssignor.Report.class,
            StateOwnership.class,
            StateOwnership.Owner.class,
            // resources whose annotations are read at run time (HttpGuards.methodsByPath, AccessFilter)
            MirrorResource.class,
            TopicResource.class,
            ServiceConfigResource.class,
            VerificationResource.class,
            InstanceResource.class,
        })
public final class NativeRegistrations {

    private NativeRegistrations() {}
}
