package io.clustermirror.api;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

@Schema(
        name = "VerificationList",
        description = "A mirror's recent verifications (this instance's, since it started), newest first")
public record VerificationList(List<VerificationDescription> verifications) {}
