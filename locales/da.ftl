# signupd på dansk: hvert ord, en besøgende læser på siderne og i de to mails.
# Beskedernes id'er og variablerne ($list, $site, ...) er de samme som i en.ftl.
#
# Tiltale: "du", som danske hjemmesider; korte sætninger.
# Ordliste:
#   sign up / signup        - tilmelde sig / tilmelding
#   confirm                 - bekræfte / bekræftelse
#   list                    - liste
#   remove (my address)     - fjerne (min adresse); oplysningerne "slettes"
#   preferences             - indstillinger / indstillingsside
#   email address           - e-mailadresse (kort: adresse)
#   link                    - link
#   subscription            - tilmelding
#   unsubscribe             - afmelde sig
#   mail                    - mail
#   one-way hash            - envejshash

## Mail dates

date-format = { $day }. { $month } { $year } kl. { $time } UTC
date-month-1 = januar
date-month-2 = februar
date-month-3 = marts
date-month-4 = april
date-month-5 = maj
date-month-6 = juni
date-month-7 = juli
date-month-8 = august
date-month-9 = september
date-month-10 = oktober
date-month-11 = november
date-month-12 = december

## Durations

duration-second =
    { $n ->
        [one] { $n } sekund
       *[other] { $n } sekunder
    }
duration-minute =
    { $n ->
        [one] { $n } minut
       *[other] { $n } minutter
    }
duration-hour =
    { $n ->
        [one] { $n } time
       *[other] { $n } timer
    }
duration-day =
    { $n ->
        [one] { $n } dag
       *[other] { $n } dage
    }
duration-and = { $init } og { $last }
duration-separator = {", "}
duration-per = { $n } pr. { $duration }

## page

page-back-to = Tilbage til { $site }
page-privacy = Hvad vi gemmer, og hvor længe
page-languages = På andre sprog:

## errors

errors-unavailable-title = Prøv igen
errors-unavailable = Det kunne ikke lade sig gøre lige nu. Prøv igen om et minut.
errors-not-found-title = Ikke fundet
errors-not-found = Der er ingen tilmeldingsformular her.
errors-not-found-link = Gå til tilmeldingsformularen
errors-incomplete-title = Linket er ufuldstændigt
errors-incomplete = Linket ser ud til at være klippet over eller ændret. Åbn det igen fra mailen, eller kopiér hele adressen ind i din browser.
errors-refused-title = Det kunne ikke lade sig gøre
errors-refused = Forespørgslen kunne ikke læses. Gå tilbage til siden, og prøv igen.
errors-timeout = Forespørgslen nåede ikke frem i tide. Prøv igen.
errors-internal = Noget gik galt hos os. Prøv igen om et minut.

## signup

signup-title = Tilmelding: { $list }
signup-heading = Tilmeld dig { $list }
signup-intro = Skriv din e-mailadresse. Vi sender dig et link; du er først tilmeldt, når du har åbnet det og bekræftet.
signup-email-label = E-mailadresse
signup-honeypot-label = Lad dette felt være tomt
signup-submit = Tilmeld mig
signup-choose-title = Tilmelding
signup-choose = Vælg en liste:
signup-several-title = Tilmelding
signup-several-heading = Tilmelding
signup-lists-legend = Hvilke lister vil du have?
signup-several-consent = Send mig de lister, jeg har sat kryds ved, på mail. Jeg kan til enhver tid afmelde mig hver enkelt af dem.
signup-no-list-ticked = Sæt kryds ved mindst én liste.
signup-optional = valgfrit
signup-choose-option = Vælg
signup-field-missing = Udfyld “{ $field }”.
signup-field-invalid = Tjek “{ $field }”: vælg en af mulighederne, eller skriv kortere og på én linje.
signup-unreadable = Formularen kunne ikke læses. Prøv igen.
signup-unsupported = Formularen blev sendt i et format, som denne tjeneste ikke forstår.
signup-too-large = Formularen var for stor. Skriv kun din e-mailadresse.
signup-origin-not-allowed = Formularen kan ikke bruges fra det websted, den blev sendt fra.
signup-invalid-email = Skriv en gyldig e-mailadresse, f.eks. navn@example.com.
signup-consent-required = Sæt kryds i feltet for at sige ja til at modtage disse mails.
signup-unknown-list = Formularen peger på en liste, der ikke findes.
signup-invalid-source = Formularen sender en kilde, som denne tjeneste ikke accepterer. Giv gerne webstedets ejer besked.
signup-unknown-tag = Formularen sender et tag, som listen ikke kender. Giv gerne webstedets ejer besked.
signup-domain-not-allowed = Adresser på dette domæne kan ikke bruges til tilmelding her. Brug en anden e-mailadresse.
signup-rate-limited = For mange tilmeldinger fra dit netværk. Prøv igen senere.
signup-storage-unavailable = Din tilmelding kunne ikke gemmes lige nu. Prøv igen om et minut.

## check inbox

check-inbox-title = Tjek din indbakke
check-inbox-sent = Hvis adressen kan modtage mails, er en besked på vej. Åbn linket i den, og tryk på knappen for at bekræfte.
check-inbox-sent-for = Hvis adressen kan modtage mails, er en besked om { $list } på vej. Åbn linket i den, og tryk på knappen for at bekræfte.
check-inbox-nothing-arrived = Er der ikke kommet noget efter et par minutter? Kig i din spammappe. Linket virker kun i begrænset tid; du kan bare tilmelde dig igen.
check-inbox-open-inbox = Åbn { $provider }

## surge

surge-title = Et skridt mere
surge-unusual = Webstedet har usædvanlig meget trafik lige nu, så det sender kun bekræftelsesmails til dem, der beder om en.
surge-ask = Tryk på knappen, så er din bekræftelsesmail på vej.
surge-button = Send min bekræftelsesmail
surge-not-you = Har du ikke tilmeldt dig? Luk siden, så bliver der ikke sendt noget.

## confirm

confirm-title = Bekræft din tilmelding: { $list }
confirm-heading = Bekræft din tilmelding
confirm-intro = Du har bedt om at få { $list } på mail. Tryk på knappen for at bekræfte; der bliver ikke sendt noget, før du gør det.
confirm-email-label = Din e-mailadresse
confirm-email-hint = Skriv den adresse, som denne mail blev sendt til. Så kan programmer, der automatisk tjekker links, ikke bekræfte for dig.
confirm-button = Bekræft tilmelding
confirm-not-you = Har du ikke bedt om det? Luk bare siden; uden bekræftelse får du ikke mere.
confirm-wrong-address = Det er ikke den adresse, linket blev sendt til. Skriv den igen.
confirm-already-title = Allerede bekræftet
confirm-already = Denne adresse er allerede tilmeldt { $list }. Du behøver ikke gøre mere.
confirm-done-title = Du er tilmeldt
confirm-done = Tak. Din adresse er nu tilmeldt { $list }.
confirm-done-any = Tak. Din adresse er nu tilmeldt.
confirm-expired-title = Linket er udløbet
confirm-expired = Bekræftelseslinket er ikke længere gyldigt: det er udløbet, erstattet af en nyere mail eller allerede brugt. Du kan tilmelde dig igen.
confirm-sign-up-again = Tilmeld dig igen

## manage

manage-title = Fjern min adresse
manage-intro = Dette fjerner din adresse fra { $list }. Du får ikke flere mails derfra.
manage-intro-any = Dette fjerner din adresse fra den liste, som linket blev sendt for. Du får ikke flere mails derfra.
manage-button = Fjern min adresse
manage-removed-title = Adressen er fjernet
manage-removed = Din adresse er fjernet fra { $list }. Du får ikke flere mails derfra.
manage-removed-any = Din adresse er fjernet. Du får ikke flere mails fra denne liste.

## preferences

preferences-title = Dine e-mailindstillinger
preferences-intro = Sæt kryds ved de lister fra { $site }, du vil have, fjern krydset ved dem, du ikke længere vil have, og gem.
preferences-legend = Lister
preferences-pending = Afventer din bekræftelse.
preferences-kept = Det fortalte du os, da du tilmeldte dig:
preferences-save = Gem
preferences-remove-all-heading = Fjern min adresse
preferences-remove-all-intro = Eller fjern din adresse fra alle disse lister på én gang. Så får du ikke flere mails fra dem.
preferences-remove-all = Fjern mig fra alle
preferences-saved-title = Indstillingerne er gemt
preferences-saved = Dine valg for { $site } er gemt. Du får kun mails fra de lister, du har sat kryds ved.
preferences-saved-any = Dine valg er gemt. Du får kun mails fra de lister, du har sat kryds ved.
preferences-unreadable-title = Formularen kunne ikke læses
preferences-unreadable = Intet er ændret. Åbn linket fra mailen igen, og gem en gang til.

## privacy

privacy-title = Privatliv: { $list }
privacy-heading = Hvad der sker med din adresse
privacy-intro = Denne side beskriver, hvad der gemmes, når du tilmelder dig { $list }, og hvor længe.
privacy-stored-heading = Hvad der gemmes
privacy-stored = Din e-mailadresse, listen, versionen af den samtykketekst, du sagde ja til ({ $version }), og selve teksten, hvornår du tilmeldte dig, og hvornår og hvordan du bekræftede (også hvor lang tid efter mailen). Hvis formularen angiver dem, også hvor du tilmeldte dig fra (f.eks. “homepage-footer”), og de emner, den nævner.
privacy-fields = Formularen spørger også om { $fields }. Det, du skriver der, gemmes sammen med din tilmelding lige så længe som resten og vises på din indstillingsside.
privacy-no-ip = Din IP-adresse gemmes ikke. For at begrænse misbrug tæller signupd tilmeldinger pr. netværk under en envejshash af netværket, aldrig under selve adressen: { $limits }. En tæller dækker højst { $duration } og slettes ved den næste oprydning derefter.
privacy-mail-heading = Mailene
privacy-mail = Du får én mail med et bekræftelseslink og, hvis du tilmelder dig igen, højst én ny pr. { $duration }. Der sendes ikke andet, før du har bekræftet.
privacy-unconfirmed = Hvis du ikke bekræfter, holder linket op med at virke { $duration } efter den seneste mail, og din adresse slettes ved den næste oprydning derefter.
privacy-neighbourhood = Alle netværk i samme nabolag (en adresseblok hos én udbyder) tælles desuden sammen: { $limits }.
privacy-never-mailed = Hvis bekræftelsesmailen endnu ikke har kunnet sendes (når mange tilmelder sig på én gang), slettes din adresse { $duration } efter din tilmelding, uanset om mailen er sendt eller ej.
privacy-cap =
    For at ingen skal kunne oversvømme din indbakke ved at skrive din adresse i mange formularer, går der højst { $n ->
        [one] { $n } bekræftelsesmail
       *[other] { $n } bekræftelsesmails
    } til den samme adresse inden for 24 timer, på tværs af alle lister i denne tjeneste. Derfor gemmes en envejshash af din adresse sammen med tidspunktet for hver af disse mails i én dag.
privacy-reputation = Når du bekræfter, gemmes en envejshash af dit netværk (en adresseblok hos én udbyder) sammen med datoen i { $duration }: når mange tilmelder sig på én gang, sendes mails til netværk, hvor folk bekræfter, først. Der gemmes ikke andet om bekræftelsen sammen med den.
privacy-removal-heading = Fjern din adresse
privacy-removal = Hver mail har et link til at fjerne din adresse. Når du bruger det, slettes din adresse. Kun en envejshash af den gemmes, så den aldrig får mails igen uden en ny bekræftelse – eller aldrig mere, hvis du har angivet, at tilmeldingen ikke var din.
privacy-shared = Når du bekræfter eller fjerner din adresse, får operatørens egne systemer besked, med din adresse og hvad du har sagt ja til.
privacy-contact = Spørgsmål? Skriv til { $address }.

## mail

mail-greeting = Hej,
mail-asked = Nogen – forhåbentlig dig – har bedt om at få { $list } på denne adresse.
mail-how = Bekræft ved at åbne dette link og trykke på knappen “{ $button }”:
mail-confirm-link = Bekræft min tilmelding
mail-copy = Eller kopiér denne adresse ind i din browser:
mail-until = Linket virker indtil { $date }. Indtil du bekræfter, sendes der ikke andet.
mail-not-you = Har du ikke bedt om det? Så kan du se bort fra denne mail eller fjerne adressen for altid:
mail-remove-for-good = Fjern denne adresse
mail-welcome = Din adresse er nu tilmeldt { $list }. Tak, fordi du bekræftede.
mail-preferences-any-time = På din indstillingsside kan du når som helst vælge, hvad du får fra os, eller afmelde dig:
mail-preferences-link = Åbn min indstillingsside
mail-automated = Dette er en automatisk besked.
mail-privacy = Hvad vi gemmer, og hvor længe:
mail-confirm-subject = Bekræft din tilmelding
mail-welcome-subject = Du er tilmeldt

## language

language-name = Dansk
