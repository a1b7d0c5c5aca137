"""What the token endpoints read and write (docs/api.md, "Authentication and roles")."""

from rest_framework import serializers


class TokenCreateSerializer(serializers.Serializer):
    """Credentials for a new token; both may be left out when signed in by session."""

    username = serializers.CharField(
        required=False, max_length=150, help_text="leave out when signed in by session"
    )
    password = serializers.CharField(
        required=False,
        max_length=4096,
        write_only=True,
        trim_whitespace=False,
        style={"input_type": "password"},
        help_text="the user's password; leave out when signed in by session",
    )

    def validate(self, attrs: dict) -> dict:
        if ("username" in attrs) != ("password" in attrs):
            missing = "password" if "username" in attrs else "username"
            raise serializers.ValidationError({missing: "Give both username and password."})
        return attrs


class TokenSerializer(serializers.Serializer):
    """A token as listed: its id (the key's first characters, kept by the store), never the key."""

    id = serializers.CharField(
        source="token_key",
        read_only=True,
        help_text="the token's id: the first characters of its key",
    )
    created = serializers.DateTimeField(read_only=True, help_text="when the token was made [UTC]")
    expires = serializers.DateTimeField(
        source="expiry",
        read_only=True,
        allow_null=True,
        help_text="when the token stops working [UTC]",
    )


class NewTokenSerializer(TokenSerializer):
    """A token just made: the only time its key is shown."""

    key = serializers.CharField(
        read_only=True, help_text="send as `Authorization: Token <key>`; shown this once only"
    )
